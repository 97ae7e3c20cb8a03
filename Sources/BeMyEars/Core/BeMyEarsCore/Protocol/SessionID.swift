public import Foundation

/// One WebSocket connection to one server node. Logged instead of the username (seed §18.1).
public struct SessionID: Sendable, Hashable, Codable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID) {
        self.uuid = uuid
    }

    /// A fresh random identifier.
    public static func random() -> SessionID { SessionID(UUID()) }

    /// The lowercase 36-character form.
    public var rawValue: String { uuid.uuidString.lowercased() }

    public var description: String { rawValue }
}
