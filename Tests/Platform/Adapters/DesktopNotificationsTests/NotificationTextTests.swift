import Foundation
import Testing

@testable import DesktopNotifications

/// The sanitiser that keeps libdbus from aborting the process, and the bus address lookup.
@Suite("NotificationText and SessionBusAddress")
struct NotificationTextTests {
    @Test("text within the bound keeps newlines and tabs, loses controls, NUL and noncharacters")
    func dropsControls() {
        let noncharacters = String(
            String.UnicodeScalarView(
                [0xFFFE, 0x1FFFF, 0xFDD0].compactMap(Unicode.Scalar.init(_:) as (UInt32) -> Unicode.Scalar?)))
        #expect(noncharacters.unicodeScalars.count == 3)
        #expect(
            NotificationText.sanitized("a\u{0}b\u{1F}c\u{7F}d\u{85}e\nf\tg" + noncharacters + "h", limit: 100)
                == "abcde\nf\tgh")
        #expect(MessageWriter.isValid(NotificationText.sanitized("x\u{0}y", limit: 10)))
        #expect(!MessageWriter.isValid("x\u{0}y"))
    }

    @Test(
        "overlong text is cut at a character boundary with an ellipsis, within the byte bound",
        arguments: [
            ("é", 600, "", 1024),  // 2-byte characters
            ("👨‍👩‍👧", 100, "", 256),  // one grapheme of 18 bytes
            ("a", 1023, "€", 1024),  // a 3-byte character crossing the bound
            ("a", 5000, "", 3),  // room for the ellipsis only
        ])
    func truncates(unit: String, count: Int, tail: String, limit: Int) {
        let text = String(repeating: unit, count: count) + tail
        let result = NotificationText.sanitized(text, limit: limit)
        #expect(result.utf8.count <= limit)
        #expect(result.hasSuffix("…"))
        #expect(text.hasPrefix(result.dropLast()))
        #expect(MessageWriter.isValid(result))
    }

    @Test("text exactly at the bound is unchanged")
    func exactBound() {
        let text = String(repeating: "a", count: 1021) + "€"
        #expect(NotificationText.sanitized(text, limit: 1024) == text)
    }

    @Test("the body is markup-escaped only for servers that interpret markup")
    func markup() {
        #expect(NotificationText.body("<i>A & B</i>", markup: true) == "&lt;i&gt;A &amp; B&lt;/i&gt;")
        #expect(NotificationText.body("<i>A & B</i>", markup: false) == "<i>A & B</i>")
    }

    @Test("the session bus comes from DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus when it is a socket")
    func busAddress() throws {
        #expect(SessionBusAddress.resolve(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]) == "unix:path=/x")
        #expect(SessionBusAddress.resolve(environment: ["DBUS_SESSION_BUS_ADDRESS": "disabled:"]) == nil)
        #expect(SessionBusAddress.resolve(environment: [:]) == nil)
        #expect(SessionBusAddress.resolve(environment: ["XDG_RUNTIME_DIR": "relative"]) == nil)
        #expect(SessionBusAddress.escaped("/run/user/1000/my bus,%") == "/run/user/1000/my%20bus%2C%25")
    }
}
