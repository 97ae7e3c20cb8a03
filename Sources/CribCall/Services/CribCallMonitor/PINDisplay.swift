/// The PIN as a parent sees it on the monitor's terminal: large digits, readable from across the room.
public enum PINDisplay {
    /// Five-row glyphs for the digits, 5 columns wide.
    static let glyphs: [Character: [String]] = [
        "0": ["█████", "█   █", "█   █", "█   █", "█████"],
        "1": ["  ██ ", " ███ ", "  ██ ", "  ██ ", " ████"],
        "2": ["█████", "    █", "█████", "█    ", "█████"],
        "3": ["█████", "    █", " ████", "    █", "█████"],
        "4": ["█   █", "█   █", "█████", "    █", "    █"],
        "5": ["█████", "█    ", "█████", "    █", "█████"],
        "6": ["█████", "█    ", "█████", "█   █", "█████"],
        "7": ["█████", "    █", "   █ ", "  █  ", "  █  "],
        "8": ["█████", "█   █", "█████", "█   █", "█████"],
        "9": ["█████", "█   █", "█████", "    █", "█████"],
    ]

    /// The PIN in large digits (two groups of three), with what to do and how long it is valid.
    /// Characters that are not digits are left out.
    public static func render(_ pin: String, expiresInSec: Int, attempts: Int = 3) -> String {
        let digits = pin.filter { glyphs[$0] != nil }
        var rows = [String](repeating: "  ", count: 5)
        for (index, digit) in digits.enumerated() {
            let glyph = glyphs[digit] ?? []
            for row in 0..<5 {
                rows[row] += glyph[row] + (index == 2 ? "     " : "  ")
            }
        }
        let trimmed = rows.map { String($0.reversed().drop { $0 == " " }.reversed()) }
        return
            (["", "  Enter this PIN on the listener:", ""] + trimmed
            + ["", validity(expiresInSec, attempts: attempts)]).joined(separator: "\n")
    }

    /// The last line of ``render(_:expiresInSec:attempts:)``: how long the PIN stays valid and how many tries are
    /// left (fewer after a wrong PIN). A terminal rewrites it every second as a countdown.
    public static func validity(_ seconds: Int, attempts: Int = 3) -> String {
        guard seconds > 0 else { return "  (expired)" }
        return "  (valid for \(seconds) s; \(attempts) attempt\(attempts == 1 ? "" : "s") left)"
    }
}
