/// A row that cannot be turned back into a core value (edited by hand, or written by an incompatible release).
struct CorruptRow: Error, CustomStringConvertible {
    var table: String
    var problem: String

    var description: String { "bemyears: a row of \(table) cannot be read: \(problem)" }
}
