/// One side of a call: who, on which connection, on which server node.
///
/// A call is bound to the two sessions that made it, not just to the usernames: if a party disconnects and
/// someone registers the same name again, the new session is not a party of the old call.
public struct CallParty: Sendable, Hashable, Codable {
    public var username: Username
    public var session: SessionID
    public var node: NodeID

    public init(username: Username, session: SessionID, node: NodeID) {
        self.username = username
        self.session = session
        self.node = node
    }
}
