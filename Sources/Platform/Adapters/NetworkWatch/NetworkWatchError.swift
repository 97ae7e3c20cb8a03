/// The netlink socket could not be opened or read; `message` names the call and the system's reason.
public struct NetworkWatchError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
