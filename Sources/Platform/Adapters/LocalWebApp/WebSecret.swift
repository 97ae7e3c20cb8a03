import Foundation

/// The per-run secret of a loopback web app: 128 random bits, written as 32 lowercase hex digits, that every
/// address carries (`/s/<secret>/…`), so another user of the same machine cannot open the app. Compared in constant
/// time; never logged.
public struct WebSecret: Sendable, Hashable, CustomStringConvertible {
    /// The secret as it appears in the URL.
    public let text: String

    /// A fresh secret from the system's CSPRNG.
    public init() {
        var generator = SystemRandomNumberGenerator()
        text = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// A given secret (tests).
    public init(text: String) {
        self.text = text
    }

    /// Whether `candidate` is the secret, in time that depends only on the lengths.
    public func matches<S: StringProtocol>(_ candidate: S) -> Bool {
        let expected = Array(text.utf8)
        let given = Array(candidate.utf8)
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }

    /// Not the secret: it must not reach a log by accident.
    public var description: String { "WebSecret(…)" }
}
