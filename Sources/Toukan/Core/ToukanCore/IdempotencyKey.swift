/// The key every upload of one recording carries (`Idempotency-Key` header, tus metadata `idempotency-key`), so a
/// retry whose response was lost never creates a second memory: the server answers it with the first one.
///
/// Ours are 32 lowercase hex digits from 16 random bytes; the server accepts any 16 to 128 characters of letters,
/// digits, `-` and `_` (a UUID is fine), since other clients choose their own.
public struct IdempotencyKey: Sendable, Hashable, Codable, RawRepresentable, CustomStringConvertible {
    public let rawValue: String

    /// How many random bytes a new key takes.
    public static let randomByteCount = 16

    /// A key from injected entropy.
    /// - Parameter randomBytes: At least `randomByteCount` bytes from a cryptographic source; only the first 16
    ///   are used.
    public init(randomBytes: some Collection<UInt8>) {
        precondition(randomBytes.count >= Self.randomByteCount, "an idempotency key takes 16 random bytes")
        rawValue = lowercaseHex(randomBytes.prefix(Self.randomByteCount))
    }

    /// A key received from a client; nil unless it is 16 to 128 characters of `A-Z a-z 0-9 - _`.
    public init?(rawValue: String) {
        let bytes = rawValue.utf8
        guard (16...128).contains(bytes.count),
            bytes.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            })
        else { return nil }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

/// `bytes` as lowercase hexadecimal, two digits a byte.
func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
