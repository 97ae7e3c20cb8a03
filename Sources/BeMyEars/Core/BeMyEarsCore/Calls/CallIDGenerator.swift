import Foundation

/// Where the server generates callIds: random UUID v4 in production, a deterministic sequence in tests.
public struct CallIDGenerator: Sendable {
    private let make: @Sendable () -> CallID

    /// Uses `make` for every new call; it must never repeat an identifier.
    public init(_ make: @escaping @Sendable () -> CallID) {
        self.make = make
    }

    /// Random version 4 UUIDs.
    public static var random: CallIDGenerator {
        CallIDGenerator { CallID(UUID()) }
    }

    /// The next identifier.
    public func next() -> CallID { make() }
}
