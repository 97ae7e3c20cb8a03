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
