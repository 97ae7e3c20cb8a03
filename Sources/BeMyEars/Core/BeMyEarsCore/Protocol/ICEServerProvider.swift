public import Foundation

/// Where REGISTERED's `iceServers` come from: the same list for everyone (``SignalingConfiguration/iceServers``),
/// or servers minted for each registration, such as TURN REST credentials that expire (the server computes them;
/// this module only asks for them, with the hub's clock, so it stays free of clocks and cryptography).
public struct ICEServerProvider: Sendable {
    private let make: @Sendable (SessionID, Date) -> [ICEServer]

    /// Calls `make` once per successful REGISTER with the session and the hub's current time.
    public init(_ make: @escaping @Sendable (_ session: SessionID, _ now: Date) -> [ICEServer]) {
        self.make = make
    }

    /// The same servers for every registration.
    public static func fixed(_ servers: [ICEServer]) -> ICEServerProvider {
        ICEServerProvider { _, _ in servers }
    }

    /// The servers for one registration at `now`.
    public func iceServers(for session: SessionID, at now: Date) -> [ICEServer] {
        make(session, now)
    }
}
