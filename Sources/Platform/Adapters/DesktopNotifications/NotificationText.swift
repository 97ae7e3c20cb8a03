/// Makes text safe to send as a D-Bus string.
///
/// libdbus aborts the whole process when asked to send a string that is not valid UTF-8 or contains NUL, so
/// everything that goes on the wire passes through here first: control characters (except newline and tab) and
/// noncharacters are dropped, and the text is cut at a character boundary to a byte bound, with an ellipsis.
enum NotificationText {
    /// The byte bound of a summary.
    static let summaryLimit = 256
    /// The byte bound of a body (before markup escaping).
    static let bodyLimit = 1024
    /// The byte bound of names: app name, icon, category.
    static let nameLimit = 255
    /// The byte bound of an action's key.
    static let actionKeyLimit = 64
    /// The byte bound of an action's label.
    static let actionLabelLimit = 64

    /// Sanitises `text` and bounds it to `limit` UTF-8 bytes.
    ///
    /// - Parameters:
    ///   - text: Any text.
    ///   - limit: The most UTF-8 bytes the result may have (at least 3, the size of the ellipsis).
    /// - Returns: Valid UTF-8 without NUL or control characters (but `\n` and `\t`), at most `limit` bytes.
    static func sanitized(_ text: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where isAllowed(scalar) {
            scalars.append(scalar)
        }
        let clean = String(scalars)
        guard clean.utf8.count > limit else { return clean }
        // Cut at a Character (grapheme) boundary so no byte sequence and no emoji is split.
        let ellipsis = "…"
        let budget = limit - ellipsis.utf8.count
        var result = ""
        var used = 0
        for character in clean {
            let size = character.utf8.count
            if used + size > budget { break }
            result.append(character)
            used += size
        }
        return result + ellipsis
    }

    /// Sanitises and then, for servers that interpret body markup, escapes `&`, `<` and `>`.
    static func body(_ text: String, markup: Bool) -> String {
        let clean = sanitized(text, limit: bodyLimit)
        guard markup else { return clean }
        var escaped = ""
        escaped.reserveCapacity(clean.utf8.count)
        for character in clean {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// The actions as they go on the wire: keys and labels sanitised and bounded, actions with an empty key or a
    /// key equal to an earlier one (after bounding) left out, at most ``DesktopNotification/maximumActions``.
    ///
    /// - Parameter actions: The actions of a notification.
    /// - Returns: The actions to send, in their order.
    static func actions(_ actions: [DesktopNotification.Action]) -> [DesktopNotification.Action] {
        var result: [DesktopNotification.Action] = []
        for action in actions {
            if result.count == DesktopNotification.maximumActions { break }
            let key = sanitized(action.key, limit: actionKeyLimit)
            guard !key.isEmpty, !result.contains(where: { $0.key == key }) else { continue }
            result.append(.init(key: key, label: sanitized(action.label, limit: actionLabelLimit)))
        }
        return result
    }

    /// The last resort when libdbus still rejects a string: printable ASCII only.
    static func asciiOnly(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }))
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return true
        case 0x00..<0x20, 0x7F..<0xA0: return false  // C0 and C1 controls, DEL
        case 0xFDD0...0xFDEF: return false  // noncharacters
        default: return scalar.value & 0xFFFE != 0xFFFE  // U+xFFFE / U+xFFFF noncharacters in every plane
        }
    }
}
