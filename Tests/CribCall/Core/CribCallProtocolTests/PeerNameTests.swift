import CribCallProtocol
import Testing

/// Names peers choose, as they may be shown to a person (issue 17 item 6): nothing in them drives a terminal or
/// reorders the text around them.
@Suite("A peer's name as it may be shown")
struct PeerNameTests {
    /// What must never reach a screen: C0, DEL, C1, and the bidirectional controls.
    static let hidden: [UInt32] =
        Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F) + Array(0x202A...0x202E) + Array(0x2066...0x2069)
        + [0x200E, 0x200F, 0x061C]

    @Test("control characters (C0, DEL, C1) and bidirectional controls are hidden", arguments: hidden)
    func hiddenScalar(_ value: UInt32) throws {
        let scalar = try #require(Unicode.Scalar(value))
        #expect(PeerName.isHidden(scalar), "U+\(String(value, radix: 16, uppercase: true)) is shown")
        var name = "Nursery"
        name.unicodeScalars.insert(scalar, at: name.unicodeScalars.index(name.unicodeScalars.startIndex, offsetBy: 4))
        #expect(PeerName.sanitized(name) == "Nursery")
    }

    @Test("an ANSI escape sequence and a right-to-left override lose what makes them work")
    func escapeAndOverride() {
        let shown = PeerName.sanitized("Nurs\u{1B}[2Jery\u{202E}gpj.exe")
        #expect(shown == "Nurs[2Jerygpj.exe")
        #expect(!shown.unicodeScalars.contains(where: PeerName.isHidden))
        // The same through the C1 control sequence introducer, and an isolate.
        #expect(PeerName.sanitized("Nurs\u{9B}2Jery\u{2067}gpj.exe\u{2069}") == "Nurs2Jerygpj.exe")
    }

    @Test(
        "ordinary names are shown as they are",
        arguments: ["Nursery", "Kinderzimmer ☾", "Chambre d’Élodie", "子供部屋", "غرفة الطفل", "Baby 👶"])
    func ordinary(_ name: String) {
        #expect(PeerName.sanitized(name) == name)
    }

    @Test("white space around is trimmed, a long name is cut to 64 characters, an empty one is named")
    func bounds() {
        #expect(PeerName.sanitized("  Nursery\n") == "Nursery")
        #expect(PeerName.sanitized(String(repeating: "é", count: 100)) == String(repeating: "é", count: 64))
        #expect(PeerName.sanitized("") == PeerName.unnamed)
        #expect(PeerName.sanitized("\u{1B}\u{202E} \u{7F}") == PeerName.unnamed)
    }
}
