public import Foundation

/// Where the `iceServers` handed to clients come from: the same list for everyone
/// (``SignalingConfiguration/iceServers``), or servers minted for each session, such as TURN REST credentials that
/// expire (the server computes them; this module only asks for them, with the hub's clock, so it stays free of
/// clocks and cryptography).
///
/// Minted servers are handed out in REGISTERED and again, fresh, for each call (CALL_RINGING and CALL_REQUEST carry
/// `payload.iceServers`) and on a party's ICE_SERVERS: a credential then needs to outlast one call, not the
/// session.
public struct ICEServerProvider: Sendable {
    private let make: @Sendable (SessionID, Date) -> [ICEServer]
    /// The servers expire, so each call gets fresh ones.
    public let expires: Bool

    /// Calls `make` for each REGISTERED, each call's two parties and each ICE_SERVERS, with the session and the
    /// hub's current time.
    public init(_ make: @escaping @Sendable (_ session: SessionID, _ now: Date) -> [ICEServer]) {
        self.make = make
        self.expires = true
    }

    private init(fixed servers: [ICEServer]) {
        self.make = { _, _ in servers }
        self.expires = false
    }

    /// The same servers for every registration.
    public static func fixed(_ servers: [ICEServer]) -> ICEServerProvider {
        ICEServerProvider(fixed: servers)
    }

    /// The servers for one session at `now`.
    public func iceServers(for session: SessionID, at now: Date) -> [ICEServer] {
        make(session, now)
    }

    /// Fresh servers for a call's party, or nil when they would be the same as REGISTERED's.
    func perCall(for session: SessionID, at now: Date) -> [ICEServer]? {
        expires ? make(session, now) : nil
    }
}
