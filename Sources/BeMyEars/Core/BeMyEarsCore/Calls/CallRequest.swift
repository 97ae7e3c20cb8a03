public import Foundation

/// What a caller's CALL_REQUEST asks the store to create. The store resolves `interpreter` to the session that
/// holds the name and sets it AVAILABLE → RINGING in the same atomic step (``SignalingStore/createCall(_:)``).
public struct CallRequest: Sendable, Hashable {
    /// The server-generated callId.
    public var id: CallID
    public var caller: CallParty
    public var interpreter: Username
    public var requestedAt: Date
    public var timeouts: CallTimeouts

    public init(id: CallID, caller: CallParty, interpreter: Username, requestedAt: Date, timeouts: CallTimeouts) {
        self.id = id
        self.caller = caller
        self.interpreter = interpreter
        self.requestedAt = requestedAt
        self.timeouts = timeouts
    }
}
