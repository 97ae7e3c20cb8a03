import DeviceIdentity
import Foundation
import GStreamer
import Testing

@testable import Media

struct SessionDescriptionTextTests {
    static let offer = [
        "v=0", "o=- 1 0 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE audio0 video1",
        "a=fingerprint:sha-256 00:11", "m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=mid:audio0",
        "a=fingerprint:sha-256 22:33", "m=video 9 UDP/TLS/RTP/SAVPF 96", "a=mid:video1", "",
    ].joined(separator: "\r\n")

    @Test("every a=fingerprint line is replaced and the rest of the SDP is kept byte for byte")
    func replacesFingerprints() {
        let rewritten = SessionDescriptionText.replacingFingerprints(in: Self.offer, with: "sha-256 AA:BB")
        #expect(SessionDescriptionText.fingerprints(in: rewritten) == ["sha-256 AA:BB", "sha-256 AA:BB"])
        #expect(
            rewritten.replacingOccurrences(of: "AA:BB", with: "00:11")
                == Self.offer.replacingOccurrences(of: "22:33", with: "00:11"))
        #expect(rewritten.hasSuffix("a=mid:video1\r\n"))
    }

    @Test("a candidate named by an mDNS hostname is told from one with an IPv4 or IPv6 address")
    func candidateHostnames() {
        for named in [
            "candidate:1 1 udp 2113937151 7f3b0c1e-54f2-4c2a-9d2e-1b6f0e2a9c11.local 51234 typ host generation 0",
            "candidate:1 1 UDP 2130706431 nursery.lan 9 typ host",
            "candidate:1 1 UDP 2130706431 10.0.0.256 9 typ host",
            "candidate:1 1 UDP 2130706431 1.2.3 9 typ host",
        ] {
            #expect(SessionDescriptionText.candidateNamesHost(named), "\(named)")
        }
        for literal in [
            "candidate:1 1 UDP 2130706431 10.78.0.2 51234 typ host", "candidate:2 1 udp 1 fe80::1%eth0 9 typ host",
            "candidate:3 1 UDP 1 2001:db8::1 9 typ host", "candidate:4 1 UDP 1 ::ffff:192.0.2.1 9 typ host",
            "", "candidate:5 1 UDP",
        ] {
            #expect(!SessionDescriptionText.candidateNamesHost(literal), "\(literal)")
        }
    }

    @Test("a remote description loses its hostname candidates and keeps everything else byte for byte")
    func removesHostnameCandidates() {
        let named = "a=candidate:1 1 udp 2113937151 4142d827-4f40-4c7f-8883-5f5a30d2b915.local 41973 typ host"
        let literal = "a=candidate:2 1 udp 2113939711 10.78.0.2 41974 typ host"
        for separator in ["\r\n", "\n"] {
            let sdp = ["v=0", "m=audio 9 UDP/TLS/RTP/SAVPF 111", named, literal, "a=end-of-candidates", ""]
                .joined(separator: separator)
            #expect(
                SessionDescriptionText.removingHostnameCandidates(from: sdp)
                    == ["v=0", "m=audio 9 UDP/TLS/RTP/SAVPF 111", literal, "a=end-of-candidates", ""]
                    .joined(separator: separator))
        }
        #expect(SessionDescriptionText.removingHostnameCandidates(from: Self.offer) == Self.offer)
    }

    @Test("mids and media kinds are read per media section")
    func readsMids() {
        #expect(SessionDescriptionText.mids(in: Self.offer) == ["audio0", "video1"])
        #expect(SessionDescriptionText.mediaKinds(in: Self.offer) == ["audio", "video"])
        #expect(SessionDescriptionText.mids(in: "v=0\r\nm=audio 9 X 0\r\n") == [nil])
    }

    @Test("a certificate matches only its own sha-256 fingerprint, in any letter case")
    func matchesFingerprints() throws {
        let certificate = try MediaTestSupport.certificate()
        let own = certificate.sdpFingerprint
        #expect(SessionDescriptionText.sha256Fingerprint(of: certificate.certificateDER) == String(own.dropFirst(8)))
        #expect(SessionDescriptionText.fingerprintsMatch([own], certificateDER: certificate.certificateDER))
        #expect(
            SessionDescriptionText.fingerprintsMatch([own.lowercased()], certificateDER: certificate.certificateDER))
        let other = try MediaTestSupport.certificate()
        #expect(
            !SessionDescriptionText.fingerprintsMatch(
                [other.sdpFingerprint], certificateDER: certificate.certificateDER))
        #expect(!SessionDescriptionText.fingerprintsMatch([], certificateDER: certificate.certificateDER))
        let sha1 = "sha-1 " + own.dropFirst(8)
        #expect(!SessionDescriptionText.fingerprintsMatch([sha1], certificateDER: certificate.certificateDER))
    }

    @Test("the DER of a PEM's first certificate is found after a private key block")
    func readsPEM() throws {
        let certificate = try MediaTestSupport.certificate()
        let pem = certificate.privateKeyPEM() + "\n" + certificate.certificatePEM
        #expect(SessionDescriptionText.firstCertificateDER(inPEM: pem) == certificate.certificateDER)
        #expect(SessionDescriptionText.firstCertificateDER(inPEM: certificate.privateKeyPEM()) == nil)
    }

    @Test("a missing element names the Debian package to install")
    func missingPluginMessage() {
        let error = MediaError(GStreamerError(MissingElements(["webrtcbin", "nicesrc", "dtlssrtpenc"])))
        #expect(error.code == .missingPlugin)
        #expect(error.message.contains("apt-get install gstreamer1.0-plugins-bad gstreamer1.0-nice"))
    }
}
