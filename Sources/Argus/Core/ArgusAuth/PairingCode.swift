public import Foundation

/// A pairing code: 6 decimal digits drawn uniformly from the system's CSPRNG, shown by the hub's owner and typed
/// into the app once. It lives ``lifetime``, is used up by the first right guess, and is void after
/// ``wrongGuessesAllowed`` wrong ones, so an attacker has at most 5 guesses out of 1,000,000 per code.
public enum PairingCode {
    public static let digits = 6
    /// How long a code can be used (seed 004: 5 minutes).
    public static let lifetime: TimeInterval = 300
    /// Wrong guesses while a code is live before it is void (and the owner must make a new one).
    public static let wrongGuessesAllowed = 5

    /// A new code from `generator` (tests pass a seeded one; the hub uses the system's CSPRNG).
    public static func generate(using generator: inout some RandomNumberGenerator) -> String {
        let value = Int.random(in: 0..<1_000_000, using: &generator)  // uniform: rejection sampling inside
        let text = String(value)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// A new code from the system's CSPRNG (getrandom on Linux, SecRandom on Apple systems).
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    /// Exactly six ASCII digits (what the app sends is checked before anything else).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == digits && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The odds that `guesses` random guesses hit one live code.
    public static func odds(guesses: Int) -> Double {
        Double(min(guesses, 1_000_000)) / 1_000_000
    }
}
