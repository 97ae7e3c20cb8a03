import Foundation

/// The one-time secret a QR code carries (PROTOCOL.md §5): 16 random bytes, base64url without padding.
public struct PairingToken: Sendable, Hashable {
    /// The 16 token bytes. Secret: never log them.
    public let bytes: [UInt8]

    /// A fresh random token.
    public static func random() -> PairingToken {
        var generator = SystemRandomNumberGenerator()
        return PairingToken(unchecked: (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Wraps 16 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses the QR form; nil unless it is base64url without padding of exactly 16 bytes.
    public init?(base64URL: String) {
        guard let bytes = PairingCrypto.decodeBase64URL(base64URL), bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// The QR form.
    public var base64URL: String { PairingCrypto.base64URL(bytes) }
}

extension PairingToken: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PairingToken(<redacted>)" }
    public var debugDescription: String { description }
}
