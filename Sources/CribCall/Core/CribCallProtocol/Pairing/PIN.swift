/// A pairing PIN (PROTOCOL.md §6): 6 uniform random digits, never all equal, never 123456 or 654321.
///
/// It is shown on the monitor's screen, so it is not a long-term secret, but it is still kept out of logs:
/// `description` is redacted; `digits` is for the display only.
public struct PIN: Sendable, Hashable {
    /// The six ASCII digits.
    public let digits: String

    /// Accepts exactly 6 ASCII digits that the policy allows; nil otherwise.
    public init?(_ digits: String) {
        guard Self.isWellFormed(digits), Self.isAllowed(digits) else { return nil }
        self.digits = digits
    }

    /// A fresh PIN, drawn uniformly from the allowed ones.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> PIN {
        while true {
            let value = Int.random(in: 0..<1_000_000, using: &generator)
            var text = String(value)
            text = String(repeating: "0", count: 6 - text.count) + text
            if let pin = PIN(text) { return pin }
        }
    }

    /// A fresh PIN from the system's secure generator.
    public static func random() -> PIN {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// True for exactly 6 ASCII digits.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 6 && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// False for the PINs people guess first.
    public static func isAllowed(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        if bytes.allSatisfy({ $0 == bytes.first }) { return false }
        return text != "123456" && text != "654321"
    }
}

extension PIN: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PIN(******)" }
    public var debugDescription: String { description }
}
