import BeMyEarsCore
import Testing

@Suite("Usernames: 3–32 ASCII letters, digits, '.', '_', '-', lowercased")
struct UsernameTests {
    @Test(
        "valid names are accepted and lowercased",
        arguments: [
            ("abc", "abc"), ("Alice", "alice"), ("BOB.SMITH", "bob.smith"), ("a_b-c.d", "a_b-c.d"),
            ("007", "007"), ("...", "..."), (String(repeating: "Z", count: 32), String(repeating: "z", count: 32)),
        ]
    )
    func valid(input: String, expected: String) throws {
        #expect(try Username(validating: input).rawValue == expected)
    }

    @Test(
        "invalid names are refused with INVALID_USERNAME and a message stating the rule",
        arguments: [
            "", "ab", String(repeating: "a", count: 33), "ali ce", "alice!", "al@ce", "josé", "zoë", "名前です",
            "😀😀😀", "\u{212A}elvin",  // KELVIN SIGN lowercases to ASCII "k": must not pass as "kelvin"
            "ａｂｃ",  // fullwidth letters
            "abc\n", "abc\u{0}", "a/b/c", "İstanbul",
        ]
    )
    func invalid(input: String) {
        #expect {
            try Username(validating: input)
        } throws: { error in
            guard let error = error as? SignalingError else { return false }
            return error.code == .invalidUsername && error.message.contains(Username.rule)
        }
    }

    @Test("the message says which rule was broken")
    func messages() {
        func message(_ text: String) -> String {
            do {
                _ = try Username(validating: text)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message("ab").contains("too short"))
        #expect(message(String(repeating: "a", count: 40)).contains("too long"))
        #expect(message("a b c").contains("not allowed"))
        #expect(message("").contains("Choose a username"))
        #expect(Username.rule == "usernames are 3–32 characters of letters, digits, '.', '_' or '-'")
    }

    @Test("usernames sort by byte order: '-' < '.' < digits < '_' < letters")
    func byteOrder() throws {
        let names = try ["b", "a_b", "a.b", "a-b", "a0b", "aab"].map { try Username(validating: $0 + "xx") }
        #expect(names.sorted().map(\.rawValue) == ["a-bxx", "a.bxx", "a0bxx", "a_bxx", "aabxx", "bxx"])
    }
}
