/// One server process. Sessions live on exactly one node; with a shared store, messages for a session on
/// another node are handed to ``SignalingOutbound/forward(_:to:on:)``.
public struct NodeID: Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The node of a single-process server.
    public static let local = NodeID("local")

    public var description: String { rawValue }
}
