import CribCallProtocol
public import Foundation

/// Plain-text output for the listing commands (`cribcall`'s and `argus-hub`'s).
public enum TextTable {
    /// `rows` (the first is the header) with columns padded to their widest cell, separated by two spaces; the last
    /// column is not padded.
    public static func render(_ rows: [[String]]) -> String {
        var widths = [Int](repeating: 0, count: rows.first?.count ?? 0)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `text` (an id, or what the user typed) with the characters a peer's name must not show
    /// (``PeerName/isHidden(_:)``: control, bidirectional and other format characters) shown as `\u{…}` escapes, so
    /// printing it can neither drive the terminal nor reorder the line. Peers' names are shown with
    /// ``PeerName/sanitized(_:)``, as everywhere else.
    public static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if PeerName.isHidden(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// ISO 8601 in UTC with milliseconds (the database's precision), e.g. `2025-01-31T08:15:00.000Z`.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

}

/// Finds the paired device a command-line argument names.
public enum DeviceLookup {
    /// The shortest prefix accepted in place of a full listener or monitor id.
    public static let minimumPrefixLength = 4

    /// The item `text` names: an exact id, else (with `name`) a unique exact name, else a unique id prefix of at
    /// least ``minimumPrefixLength`` characters (or the one of several same-named items it prefixes).
    ///
    /// - Parameters:
    ///   - kind: "listener" or "monitor", for the ambiguity message.
    ///   - unknown: Thrown when nothing matches.
    /// - Throws: `unknown`, or a ``CribCallRuntimeError`` when the text names several.
    public static func find<Item>(
        _ text: String,
        among items: [Item],
        id: (Item) -> String,
        name: (Item) -> String,
        matchingNames: Bool,
        kind: String,
        unknown: any Error
    ) throws -> Item {
        if let exact = items.first(where: { id($0) == text }) { return exact }
        let named = matchingNames ? items.filter { name($0) == text } : []
        if named.count == 1 { return named[0] }
        guard text.count >= minimumPrefixLength || named.count > 1 else { throw unknown }
        let matches = named.count > 1 ? named : items.filter { id($0).hasPrefix(text) }
        switch matches.count {
        case 0:
            throw unknown
        case 1:
            return matches[0]
        default:
            let list = matches.map { "\(TextTable.printable(id($0))) (\(TextTable.printable(name($0))))" }
                .joined(separator: ", ")
            throw CribCallRuntimeError(
                .ambiguous,
                "\(TextTable.printable(text)) matches \(matches.count) \(kind)s: \(list); give more of the id")
        }
    }
}
