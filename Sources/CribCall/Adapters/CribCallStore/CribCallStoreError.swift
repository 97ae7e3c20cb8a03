/// Why a ``CribCallDatabase`` operation was refused.
public enum CribCallStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The database file could not be created or opened; `reason` is the system error text.
    case cannotOpen(path: String, reason: String)
    /// A setting was given a value outside its allowed range; `message` states the range.
    case invalidSetting(field: String, message: String)
    /// A stored setting cannot be read back (another program wrote an invalid value).
    case corruptSetting(key: String, value: String)
    /// No trusted monitor has this id.
    case unknownMonitor(id: String)
    /// A noise event with this event id is already stored.
    case duplicateEventId(String)
    /// An argument such as a limit was negative.
    case invalidArgument(String)
    /// Another certificate is paired under this listener id: one device cannot take another's place.
    case listenerIdTaken(String)
    /// The event log could not grow: the disk (or the file-size limit) is full; SQLite's words.
    case logFull(String)

    /// A one-line explanation suitable for logs and command-line output.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open database \(path): \(reason)"
        case .invalidSetting(_, let message):
            message
        case .corruptSetting(let key, let value):
            "stored setting \(key) has an invalid value \(String(reflecting: value))"
        case .unknownMonitor(let id):
            "no trusted monitor with id \(id)"
        case .duplicateEventId(let id):
            "a noise event with eventId \(id) is already stored"
        case .invalidArgument(let message):
            message
        case .listenerIdTaken(let id):
            "listener id \(id) is paired with another certificate; revoke that listener first"
        case .logFull(let reason):
            "the disk is full (\(reason)): free some space where the data directory is"
        }
    }
}
