import Crypto
public import Foundation

/// The canonical identity of a device: the SHA-256 of its certificate's DER encoding (PROTOCOL.md §1).
///
/// On the wire and on screen it is 64 lowercase hex characters. Comparisons are constant time, because a
/// fingerprint is compared against attacker-chosen input during pairing.
public struct CertificateFingerprint: Sendable, Hashable {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Fingerprints the DER encoding of a certificate.
    /// - Parameter certificateDER: The certificate's DER bytes.
    public init(certificateDER: some DataProtocol) {
        self.bytes = Array(SHA256.hash(data: certificateDER))
    }

    /// Wraps 32 raw digest bytes, or returns nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses the transport form: exactly 64 hex characters. Uppercase is accepted; the stored form is canonical.
    /// - Returns: nil when the text is not 64 hex digits.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            guard let high = Self.nibble(utf8[2 * index]), let low = Self.nibble(utf8[2 * index + 1]) else {
                return nil
            }
            out[index] = high << 4 | low
        }
        self.bytes = out
    }

    /// The lowercase hex transport form (64 characters).
    public var hex: String {
        let table = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(table[Int(byte >> 4)])
            out.append(table[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A short human form for screens and logs, e.g. `3fa1·09c2·77de`: enough to tell devices apart.
    public var shortForm: String {
        let full = hex
        return [0, 4, 8].map { offset in
            let start = full.index(full.startIndex, offsetBy: offset)
            return String(full[start..<full.index(start, offsetBy: 4)])
        }.joined(separator: "·")
    }

    /// Constant-time equality: the time taken does not depend on where the fingerprints differ.
    public static func == (lhs: CertificateFingerprint, rhs: CertificateFingerprint) -> Bool {
        ConstantTime.equals(lhs.bytes, rhs.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension CertificateFingerprint: CustomStringConvertible {
    public var description: String { hex }
}

extension CertificateFingerprint: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = CertificateFingerprint(hex: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "a certificate fingerprint is 64 hex characters (SHA-256 of the certificate DER)"
            )
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
