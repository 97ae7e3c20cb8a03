/// Where the signaling state lives, from `--store`: `memory` (one process) or a PostgreSQL URL (several
/// processes sharing registrations, states and calls).
public enum StoreLocation: Sendable, Hashable {
    case memory
    /// `postgres://…` or `postgresql://…` as given; `BeMyEarsPostgres` checks the rest of it.
    case postgres(String)

    /// The syntax, for error messages.
    public static let syntax = "memory or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"

    /// Parses `--store`.
    /// - Throws: ``ServerStartupError`` with the syntax; the message never repeats the value (it may hold a
    ///   password).
    public init(parsing text: String) throws(ServerStartupError) {
        if text == "memory" {
            self = .memory
            return
        }
        let lowered = text.lowercased()
        guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else {
            throw ServerStartupError("--store must be \(Self.syntax)")
        }
        self = .postgres(text)
    }
}
