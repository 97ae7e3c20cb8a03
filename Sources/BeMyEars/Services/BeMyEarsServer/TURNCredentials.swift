public import BeMyEarsCore
import Crypto
public import Foundation

/// Time-limited TURN credentials of the "TURN REST API" scheme that coturn implements with `use-auth-secret`
/// (draft-uberti-behave-turn-rest): username `<expiry unix time>:<name>`, password
/// `base64(HMAC-SHA1(secret, username))`. The server and coturn share only the secret; nothing is stored.
///
/// `name` is the session's identifier, never the username a person chose, so coturn's own logs hold nothing but
/// what seed §18.1 allows in ours.
public struct TURNCredentials: Sendable {
    /// The `turn:` / `turns:` URLs handed to clients, e.g. `turn:127.0.0.1:3478?transport=udp`.
    public var urls: [String]
    /// coturn's `static-auth-secret`.
    public var secret: String
    /// How long a credential stays valid after it is handed out (REGISTERED, each call's CALL_RINGING and
    /// CALL_REQUEST, ICE_SERVERS). coturn checks the expiry on every authenticated request (allocate, refresh,
    /// permission), so a call's credentials must outlast the call: the longest call plus a margin. A client renews
    /// them for a longer call with ICE_SERVERS and an ICE restart.
    public var lifetime: Duration

    /// - Parameters:
    ///   - url: `turn:HOST:PORT` (or `turns:`); without a `?transport=` it is offered over UDP and TCP (seed §13:
    ///     TCP relay as the fallback for restrictive networks), and `stun:HOST:PORT` is added for the same server.
    ///   - secret: The shared secret.
    ///   - lifetime: Validity of each credential: the longest call plus a margin (3 h 10 min by default).
    public init(url: String, secret: String, lifetime: Duration = .seconds(ServerOptions.defaultTURNTTL)) {
        self.urls = Self.expand(url)
        self.secret = secret
        self.lifetime = lifetime
    }

    /// The credential for `name` valid until `now + lifetime`.
    public func credential(for name: String, at now: Date) -> (username: String, password: String) {
        let expiry = Int(now.timeIntervalSince1970) + Int(lifetime.components.seconds)
        let username = "\(expiry):\(name)"
        let key = SymmetricKey(data: Data(secret.utf8))
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(username.utf8), using: key)
        return (username, Data(mac).base64EncodedString())
    }

    /// The `iceServers` for one registration: a STUN entry (no credentials) and the TURN entry.
    public func iceServers(for session: SessionID, at now: Date) -> [ICEServer] {
        let (username, password) = credential(for: session.rawValue, at: now)
        let stun = urls.compactMap(Self.stunURL).uniqued()
        let turn = ICEServer(urls: urls, username: username, credential: password)
        return (stun.isEmpty ? [] : [ICEServer(urls: stun)]) + [turn]
    }

    /// The hub's source of REGISTERED `iceServers`.
    public var provider: ICEServerProvider {
        let credentials = self
        return ICEServerProvider { session, now in credentials.iceServers(for: session, at: now) }
    }

    /// `turn:h:p` → the UDP and TCP variants; URLs that name a transport are kept.
    static func expand(_ url: String) -> [String] {
        guard url.hasPrefix("turn:"), !url.contains("?") else { return [url] }
        return ["\(url)?transport=udp", "\(url)?transport=tcp"]
    }

    /// `turn:h:p?transport=…` → `stun:h:p` (coturn answers STUN on its TURN port); nil for `turns:`.
    static func stunURL(_ url: String) -> String? {
        guard url.hasPrefix("turn:") else { return nil }
        let address = url.dropFirst("turn:".count).split(separator: "?", maxSplits: 1).first ?? ""
        return address.isEmpty ? nil : "stun:\(address)"
    }
}

extension Array where Element: Hashable {
    fileprivate func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
