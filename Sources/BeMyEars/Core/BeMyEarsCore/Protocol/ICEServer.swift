public import CanonicalJSON

/// A STUN or TURN server handed to clients in REGISTERED's `iceServers` (the shape of WebRTC's `RTCIceServer`).
public struct ICEServer: Sendable, Hashable, Codable {
    /// `stun:` / `turn:` / `turns:` URLs.
    public var urls: [String]
    /// TURN username, if the server needs one.
    public var username: String?
    /// TURN credential, if the server needs one. Sent to the registering client only; never logged.
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    /// As the JSON object clients pass to `RTCPeerConnection`.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["urls": .array(urls.map(JSONValue.string))]
        if let username { members["username"] = .string(username) }
        if let credential { members["credential"] = .string(credential) }
        return .object(members)
    }
}
