public import Foundation

/// A call's identifier: a UUID the server generates (seed §9.1), written lowercase on the wire.
public struct CallID: Sendable, Hashable, Codable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID) {
        self.uuid = uuid
    }

    /// Parses the canonical 8-4-4-4-12 hex form (either case); nil for anything else. A client's callId that is
    /// not a UUID cannot name a call, so it is answered UNKNOWN_CALL without asking the store.
    public init?(_ text: String) {
        guard let uuid = UUID(uuidString: text) else { return nil }
        self.uuid = uuid
    }

    /// The lowercase 36-character form.
    public var rawValue: String { uuid.uuidString.lowercased() }

    public var description: String { rawValue }
}
