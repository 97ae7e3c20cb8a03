import Foundation

/// Which web pages may open the signaling WebSocket (`/ws`): a browser sends the page's origin with the upgrade,
/// and a page on the LAN (or any site the user visits) must not be able to register, call or answer through the
/// server. Allowed: the server's own origin (the one its Host header names, so its own browser client works behind
/// any address or name), the origins given with `--allowed-origin`, and requests without an Origin or with a
/// `ws:`/`wss:` one (programs, not pages: a page cannot leave it out, and browsers send only a page's origin —
/// some WebSocket client libraries send the URL's own scheme and host).
public struct OriginPolicy: Sendable, Hashable {
    /// Extra origins, normalised (`scheme://host[:port]`, lower case, default ports left out).
    public let allowed: Set<String>

    /// The server's own pages only (and programs).
    public static let ownOnly = OriginPolicy(normalised: [])

    private init(normalised: Set<String>) {
        allowed = normalised
    }

    /// - Throws: ``ServerStartupError`` naming an entry that is not an origin.
    public init(allowing origins: [String]) throws(ServerStartupError) {
        var normalised: Set<String> = []
        for origin in origins {
            guard let valid = Self.normalise(origin) else {
                throw ServerStartupError(
                    "--allowed-origin \(origin.prefix(100)) is not an origin: give scheme://host[:port], "
                        + "e.g. https://app.example.org")
            }
            normalised.insert(valid)
        }
        self.init(normalised: normalised)
    }

    /// Whether an upgrade with this `Origin` header (nil: none), reaching the server as `host` (its Host header),
    /// may proceed.
    public func permits(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        if let scheme = URL(string: origin)?.scheme?.lowercased(), scheme == "ws" || scheme == "wss" { return true }
        guard let normalised = Self.normalise(origin) else { return false }  // "null" (sandboxed pages, files)
        if allowed.contains(normalised) { return true }
        guard let host = host?.lowercased(), let url = URL(string: normalised), let scheme = url.scheme else {
            return false
        }
        // The page came from this server: its origin names the host the request was sent to.
        return Self.normalise("\(scheme)://\(host)") == normalised
    }

    /// `scheme://host[:port]` in lower case without a default port, or nil when `text` is not an http(s) origin.
    static func normalise(_ text: String) -> String? {
        guard text.count <= 300, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = url.host?.lowercased(), !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil
        else { return nil }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let port = url.port.flatMap { port in
            (scheme == "http" && port == 80) || (scheme == "https" && port == 443) ? nil : port
        }
        return "\(scheme)://\(shownHost)" + (port.map { ":\($0)" } ?? "")
    }
}
