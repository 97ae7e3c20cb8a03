import DeviceIdentity
import Foundation

/// The few SDP facts the adapter reads or rewrites, as text functions (GstSDPMessage is used for parsing in the
/// pipeline; these stay pure so they are tested without GStreamer).
enum SessionDescriptionText {
    /// Replaces every `a=fingerprint:` line (session or media level) by `a=fingerprint:<fingerprint>`.
    ///
    /// GStreamer 1.22's webrtcbin computes the fingerprint of a custom DTLS `pem` over the whole PEM text
    /// (certificate and key) instead of the certificate's DER, so its own line is always wrong.
    static func replacingFingerprints(in sdp: String, with fingerprint: String) -> String {
        lines(of: sdp).map { $0.hasPrefix("a=fingerprint:") ? "a=fingerprint:\(fingerprint)" : $0 }
            .joined(separator: "\r\n")
    }

    /// The `a=mid` of each media section, in order (nil for a section without one).
    static func mids(in sdp: String) -> [String?] {
        var mids: [String?] = []
        for line in lines(of: sdp) {
            if line.hasPrefix("m=") {
                mids.append(nil)
            } else if line.hasPrefix("a=mid:"), !mids.isEmpty {
                mids[mids.count - 1] = String(line.dropFirst("a=mid:".count))
            }
        }
        return mids
    }

    /// The values of all `a=fingerprint:` lines, e.g. `sha-256 AB:CD:…`.
    static func fingerprints(in sdp: String) -> [String] {
        lines(of: sdp).filter { $0.hasPrefix("a=fingerprint:") }.map { String($0.dropFirst("a=fingerprint:".count)) }
    }

    /// Whether an ICE candidate (`candidate:…` line, RFC 8839 §5.1) names its address by a hostname — a
    /// browser's mDNS name such as `7f…-….local` — instead of an IP address literal. False for the empty
    /// end-of-candidates line and for lines too short to have an address.
    static func candidateNamesHost(_ candidate: String) -> Bool {
        let fields = candidate.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 5 else { return false }
        return !isAddressLiteral(fields[4])
    }

    /// `sdp` without its `a=candidate:` lines that name a hostname (``candidateNamesHost(_:)``); the rest is kept
    /// byte for byte (line ends included).
    static func removingHostnameCandidates(from sdp: String) -> String {
        let separator = sdp.contains("\r\n") ? "\r\n" : "\n"
        let kept = lines(of: sdp).filter { line in
            !(line.hasPrefix("a=candidate:") && candidateNamesHost(String(line.dropFirst(2))))
        }
        return kept.joined(separator: separator)
    }

    /// An IPv4 dotted quad, or an IPv6 literal (hex digits and colons, an embedded IPv4 tail, a `%zone`).
    static func isAddressLiteral(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4,
            parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { ("0"..."9").contains($0) } })
        {
            return parts.allSatisfy { Int($0)! <= 255 }
        }
        let address = text.prefix { $0 != "%" }
        return address.contains(":") && address.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }

    /// The media kinds of the `m=` lines in order, e.g. `["audio", "video"]`.
    static func mediaKinds(in sdp: String) -> [String] {
        lines(of: sdp).filter { $0.hasPrefix("m=") }.map { line in
            String(line.dropFirst(2).prefix { $0 != " " })
        }
    }

    /// Whether one of the `sha-256` fingerprints equals the SHA-256 of `certificateDER` (case-insensitive).
    static func fingerprintsMatch(_ fingerprints: [String], certificateDER: [UInt8]) -> Bool {
        let actual = sha256Fingerprint(of: certificateDER)
        return fingerprints.contains { value in
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "sha-256" else { return false }
            return parts[1].trimmingCharacters(in: .whitespaces).uppercased() == actual
        }
    }

    /// Uppercase colon-separated SHA-256 (RFC 8122 form, without the `sha-256 ` prefix).
    static func sha256Fingerprint(of bytes: [UInt8]) -> String {
        String(DTLSCertificate.sdpFingerprint(ofCertificateDER: bytes).dropFirst("sha-256 ".count))
    }

    /// The DER bytes of the first `CERTIFICATE` block of a PEM text, or nil.
    static func firstCertificateDER(inPEM pem: String) -> [UInt8]? {
        var base64 = ""
        var inside = false
        for line in pem.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("-----BEGIN CERTIFICATE-----") {
                inside = true
            } else if line.hasPrefix("-----END CERTIFICATE-----") {
                return Data(base64Encoded: base64).map { Array($0) }
            } else if inside {
                base64 += line.trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    private static func lines(of sdp: String) -> [String] {
        var lines = sdp.components(separatedBy: "\r\n")
        if lines.count == 1 { lines = sdp.components(separatedBy: "\n") }
        return lines
    }
}
