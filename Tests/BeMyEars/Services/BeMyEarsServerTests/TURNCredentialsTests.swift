import BeMyEarsCore
import BeMyEarsServer
import Foundation
import Testing

@Suite("TURN REST credentials")
struct TURNCredentialsTests {
    /// The vector was computed independently:
    /// `printf '%s' 1700011400:sess | openssl dgst -sha1 -hmac s3cret -binary | base64` (the default lifetime
    /// is 3 h 10 min: the longest call plus a margin).
    @Test func credentialMatchesOpenSSL() {
        let credentials = TURNCredentials(url: "turn:127.0.0.1:3478", secret: "s3cret")
        let (username, password) = credentials.credential(for: "sess", at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(username == "1700011400:sess")
        #expect(password == "cXgHKM66jMFWWzAyrkPp6C8u0Lg=")
    }

    /// Each registration gets a STUN entry and a TURN entry over UDP and TCP (seed §13: TCP relay fallback),
    /// named after the session, never the person's username.
    @Test func iceServersForARegistration() throws {
        let credentials = TURNCredentials(url: "turn:turn.example.org:3478", secret: "x", lifetime: .seconds(600))
        let session = SessionID(UUID(uuidString: "6f1c2b1e-1111-4111-8111-111111111111")!)
        let now = Date(timeIntervalSince1970: 1_000)
        let servers = credentials.iceServers(for: session, at: now)
        #expect(servers.count == 2)
        #expect(servers[0] == ICEServer(urls: ["stun:turn.example.org:3478"]))
        #expect(
            servers[1].urls == ["turn:turn.example.org:3478?transport=udp", "turn:turn.example.org:3478?transport=tcp"]
        )
        #expect(servers[1].username == "1600:6f1c2b1e-1111-4111-8111-111111111111")
        #expect(servers[1].credential == credentials.credential(for: session.rawValue, at: now).password)
    }

    /// A URL that names its transport, or a `turns:` URL, is handed out as given.
    @Test func explicitURLsAreKept() {
        #expect(TURNCredentials(url: "turn:h:1?transport=tcp", secret: "x").urls == ["turn:h:1?transport=tcp"])
        let tls = TURNCredentials(url: "turns:h:5349", secret: "x")
        #expect(tls.urls == ["turns:h:5349"])
        #expect(tls.iceServers(for: .random(), at: Date()).count == 1)
    }
}
