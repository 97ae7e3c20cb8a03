public import GRDB

/// A row of `setting`: one key–value pair (monitor settings and the PIN-failure counter).
public struct SettingRecord: Sendable, Hashable, Codable, FetchableRecord, PersistableRecord {
    /// The table name, `setting`.
    public static let databaseTableName = "setting"

    /// The setting's name, e.g. `threshold` (primary key).
    public var key: String
    /// The value as text: integers in decimal, ``AutoStreamMode`` as its raw value.
    public var value: String

    /// The string column names.
    public enum CodingKeys: String, CodingKey, ColumnExpression {
        case key, value
    }

    /// Creates a record.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}
