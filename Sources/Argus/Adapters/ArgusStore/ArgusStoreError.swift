/// Why the hub's database could not be used; the message says what to do.
public struct ArgusStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
