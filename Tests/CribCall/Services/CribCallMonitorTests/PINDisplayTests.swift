import CribCallMonitor
import Testing

@Suite("PINDisplay: the PIN in large terminal digits")
struct PINDisplayTests {
    @Test("six digits become five rows of block glyphs in two groups, with the validity")
    func render() {
        let text = PINDisplay.render("482913", expiresInSec: 60)
        let rows = text.split(separator: "\n", omittingEmptySubsequences: false)
        let glyphRows = rows.filter { $0.contains("█") }
        #expect(glyphRows.count == 5)
        // Six 5-column glyphs, 2 spaces between, 5 between the groups, 2 leading.
        #expect(glyphRows.map(\.count).max() == 2 + 6 * 5 + 4 * 2 + 5)
        #expect(text.contains("Enter this PIN on the listener"))
        #expect(text.contains("valid for 60 s"))
        // The first row spells the tops of 4, 8, 2, 9, 1, 3.
        #expect(glyphRows[0].hasPrefix("  █   █  █████  █████     █████    ██   █████"))
    }

    @Test("the tries left are shown, and counted down after a wrong PIN")
    func triesLeft() {
        #expect(PINDisplay.render("482913", expiresInSec: 60).hasSuffix("(valid for 60 s; 3 attempts left)"))
        #expect(PINDisplay.validity(41, attempts: 2) == "  (valid for 41 s; 2 attempts left)")
        #expect(PINDisplay.validity(12, attempts: 1) == "  (valid for 12 s; 1 attempt left)")
        #expect(PINDisplay.validity(0, attempts: 1) == "  (expired)")
    }

    @Test("each digit renders differently, so no two PINs look alike")
    func distinctGlyphs() {
        let renderings = Set((0...9).map { PINDisplay.render(String(repeating: "\($0)", count: 6), expiresInSec: 1) })
        #expect(renderings.count == 10)
    }
}
