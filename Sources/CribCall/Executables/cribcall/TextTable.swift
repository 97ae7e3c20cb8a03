/// Plain-text tables for the listing commands.
enum TextTable {
    /// `rows` (the first is the header) with columns padded to their widest cell, separated by two spaces; the last
    /// column is not padded.
    static func render(_ rows: [[String]]) -> String {
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
}
