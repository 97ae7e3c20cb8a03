public import BeMyEarsCore
public import Foundation

/// The wall clock (`Date()`): call deadlines are compared by every node of a shared store.
public struct SystemSignalingClock: SignalingClock {
    public init() {}

    public var now: Date { Date() }
}
