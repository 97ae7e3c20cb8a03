import CribCallProtocol
import DeviceIdentity
import Foundation
import StreamMedia
import Testing

@testable import Media

/// The signaling machine of a peer, sender and receiver back to back, without GStreamer.
@Suite("Peer signaling, pure")
struct PeerSignalingTests {
    static let offer = """
        v=0\r
        o=- 1 0 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE audio0 video1\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        a=mid:audio0\r
        a=fingerprint:sha-256 AA:BB\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        a=mid:video1\r

        """
    static let answer = offer.replacingOccurrences(of: "AA:BB", with: "CC:DD")

    /// The error `body` throws, if any.
    static func refusal(_ body: () throws(MediaError) -> String?) -> MediaError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("a sender creates its offer once, publishes it, and sets it locally only when the answer arrives")
    func senderNegotiation() throws {
        var sender = PeerSignaling(isSender: true, sessionId: "s1")
        var receiver = PeerSignaling(isSender: false, sessionId: "s1")
        let receiverOffers = receiver.negotiationNeeded()
        #expect(!receiverOffers)
        let early = Self.refusal { () throws(MediaError) in try sender.acceptRemoteDescription(Self.answer) }
        #expect(early == MediaError(code: .invalidState, message: "an answer arrived before the offer was sent"))
        let first = sender.negotiationNeeded()
        let again = sender.negotiationNeeded()
        #expect(first && !again, "one offer per peer")
        let created = Self.offer.replacingOccurrences(of: "AA:BB", with: "00:00")
        let published = sender.localDescriptionCreated(created, published: Self.offer)
        #expect(published == .localDescription(sdp: Self.offer))
        // The receiver takes the published offer and answers; it has no offer of its own to set.
        let receiverOwn = try receiver.acceptRemoteDescription(Self.offer)
        #expect(receiverOwn == nil)
        #expect(receiver.remoteFingerprints == ["sha-256 AA:BB"])
        let answered = receiver.localDescriptionCreated(Self.answer, published: Self.answer)
        #expect(answered == .localDescription(sdp: Self.answer))
        // The sender gets back webrtcbin's own offer (not the published one) to set locally, once.
        let own = try sender.acceptRemoteDescription(Self.answer)
        #expect(own == created)
        #expect(sender.remoteFingerprints == ["sha-256 CC:DD"])
        let second = Self.refusal { () throws(MediaError) in try sender.acceptRemoteDescription(Self.answer) }
        #expect(second == MediaError(code: .invalidState, message: "the stream s1 already has an answer"))
    }

    @Test("candidates carry their line's mid, end once, and stop when the run ends")
    func candidates() throws {
        var peer = PeerSignaling(isSender: true, sessionId: "s2")
        _ = peer.negotiationNeeded()
        _ = peer.localDescriptionCreated(Self.offer, published: Self.offer)
        let host = "candidate:1 1 UDP 1 10.0.0.2 5000 typ host"
        #expect(
            peer.localCandidate(mline: 1, host)
                == .localCandidate(.init(candidate: host, sdpMid: "video1", sdpMLineIndex: 1))
        )
        let end = peer.gatheringComplete()
        let endAgain = peer.gatheringComplete()
        #expect(end == .localCandidate(.init(candidate: "", sdpMid: "audio0", sdpMLineIndex: 0)))
        #expect(endAgain == nil)
        #expect(peer.localCandidate(mline: 0, "candidate:late") == nil, "nothing after the end of candidates")
        _ = try peer.acceptRemoteDescription(Self.answer)
        #expect(try peer.remoteCandidateLine(.init(candidate: "c", sdpMid: nil, sdpMLineIndex: 1)) == 1)
        #expect(try peer.remoteCandidateLine(.init(candidate: "c", sdpMid: "video1", sdpMLineIndex: nil)) == 1)
        #expect(try peer.remoteCandidateLine(.init(candidate: "c", sdpMid: "other", sdpMLineIndex: nil)) == 0)
        #expect(
            throws: MediaError(code: .invalidState, message: "ICE candidate for media line 2, but the session has 2")
        ) {
            _ = try peer.remoteCandidateLine(.init(candidate: "c", sdpMid: nil, sdpMLineIndex: 2))
        }
        let stopped = peer.end("stopped")
        let later = peer.end("later")
        #expect(stopped && !later, "the first reason wins")
        #expect(peer.endReason == "stopped")
        #expect(throws: MediaError(code: .ended, message: "the stream s2 has ended")) {
            _ = try peer.remoteCandidateLine(.init(candidate: "c", sdpMid: nil, sdpMLineIndex: 0))
        }
    }

    @Test("media flows for a sender when connected, for a receiver when connected and audio decoded, once")
    func flowing() {
        var sender = PeerSignaling(isSender: true, sessionId: "s3")
        let senderFlows = sender.verifiedConnection()
        let senderAgain = sender.verifiedConnection()
        #expect(senderFlows == .flowing && senderAgain == nil)
        var receiver = PeerSignaling(isSender: false, sessionId: "s3")
        let audioFirst = receiver.decodedFirstAudio()
        let thenConnected = receiver.verifiedConnection()
        #expect(audioFirst == nil && thenConnected == .flowing)
        var other = PeerSignaling(isSender: false, sessionId: "s4")
        let connectedFirst = other.verifiedConnection()
        let thenAudio = other.decodedFirstAudio()
        #expect(connectedFirst == nil && thenAudio == .flowing)
        var ended = PeerSignaling(isSender: true, sessionId: "s5")
        _ = ended.end("gone")
        let afterEnd = ended.verifiedConnection()
        #expect(afterEnd == nil)
    }

    @Test("the remote certificate must match its fingerprint; an unread one is read again, then refused")
    func certificateCheck() throws {
        let remote = try DTLSCertificate.generate(now: Date())
        let stranger = try DTLSCertificate.generate(now: Date())
        let fingerprints = [remote.sdpFingerprint]
        #expect(
            CertificateCheck.judge(peerPEMs: [remote.certificatePEM], fingerprints: fingerprints, attempt: 0)
                == .verified)
        guard
            case .refused(let reason) = CertificateCheck.judge(
                peerPEMs: [stranger.certificatePEM], fingerprints: fingerprints, attempt: 0)
        else {
            Issue.record("a certificate that does not match must be refused")
            return
        }
        #expect(reason.contains("does not match the fingerprint"))
        // Fail closed: a mismatch anywhere wins over an unread decoder.
        #expect(
            CertificateCheck.judge(peerPEMs: [nil, stranger.certificatePEM], fingerprints: fingerprints, attempt: 0)
                != .verified)
        #expect(CertificateCheck.judge(peerPEMs: [nil], fingerprints: fingerprints, attempt: 0) == .retry)
        #expect(CertificateCheck.judge(peerPEMs: [], fingerprints: fingerprints, attempt: 0) == .retry)
        let last = CertificateCheck.maxAttempts - 1
        guard
            case .refused(let unread) = CertificateCheck.judge(
                peerPEMs: [nil], fingerprints: fingerprints, attempt: last)
        else {
            Issue.record("a certificate never read must be refused")
            return
        }
        #expect(unread.contains("could not be read"))
    }
}
