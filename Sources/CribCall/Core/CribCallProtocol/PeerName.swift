import Foundation

/// A name a peer chose for itself, made fit to show a person.
///
/// Anyone on the LAN can choose one: a listener's name arrives in pairing, a monitor's in its DNS-SD TXT record,
/// its QR code and its pairing. Shown as received, a name could drive the terminal it is printed on (control
/// characters: an ANSI escape sequence starts with ESC or the C1 CSI) or reorder the text around it (Unicode
/// bidirectional controls: U+202E RIGHT-TO-LEFT OVERRIDE shows `gpj.exe` as `exe.jpg`). The monitor stores the
/// listener names it accepts in this form; a listener stores monitor names as received (its `--json` output stays
/// exact, JSON escaping protects it) and shows them in this form.
public enum PeerName {
    /// The most characters of a name that are kept.
    public static let maximumLength = 64
    /// What a name with nothing showable in it is shown as.
    public static let unnamed = "Unnamed device"

    /// `name` as it may be shown: every character ``isHidden(_:)`` removed, white space around it trimmed, at most
    /// ``maximumLength`` characters, or ``unnamed`` when nothing is left.
    ///
    /// - Parameter name: A name as a peer sent it.
    /// - Returns: The name without control, format or bidirectional characters; never empty.
    public static func sanitized(_ name: String) -> String {
        let cleaned = String(String.UnicodeScalarView(name.unicodeScalars.filter { !isHidden($0) }))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return cleaned.isEmpty ? unnamed : String(cleaned.prefix(maximumLength))
    }

    /// Whether `scalar` must not reach a screen as it is: a control character (C0, DEL, C1: what terminal escape
    /// sequences are made of), a format character (among them the bidirectional embeddings, overrides and isolates
    /// U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C, and zero-width characters), a line or
    /// paragraph separator, a surrogate, a private-use or an unassigned code point.
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse: true
        default: false
        }
    }
}
