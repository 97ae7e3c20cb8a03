import BeMyEarsServer
import Testing

/// `bemyears-server`'s options, checked without starting anything.
@Suite("Server options")
struct ServerOptionsTests {
    static func options(_ change: (inout ServerOptions) -> Void) -> ServerOptions {
        var options = ServerOptions()
        change(&options)
        return options
    }

    @Test("the defaults and a shared coturn are valid")
    func valid() throws {
        try ServerOptions().validate()
        try Self.options {
            $0.turnSecret = "s3cret"
            $0.turnURL = "turn:turn.example.org:3478"
        }.validate()
        try Self.options {
            $0.withTURN = true
            $0.turnURL = "turns:relay.example.org:5349"
            $0.port = 0
        }.validate()
    }

    @Test(
        "each impossible combination says which option and what it needs",
        arguments: [
            (options { $0.port = 70_000 }, "--port must be 0...65535 (0 picks a free port)"),
            (
                options {
                    $0.withTURN = true
                    $0.turnSecret = "x"
                },
                "--with-turn starts its own coturn with a random secret: drop --turn-secret"
            ),
            (
                options { $0.turnSecret = "x" },
                "--turn-secret needs --turn-url turn:HOST:PORT (the coturn that shares the secret)"
            ),
            (
                options { $0.turnURL = "turn:a:1" },
                "--turn-url needs --turn-secret S (coturn's static-auth-secret), or use --with-turn"
            ),
            (
                options {
                    $0.turnSecret = "x"
                    $0.turnURL = "http://a:1"
                },
                "--turn-url must look like turn:HOST:PORT or turns:HOST:PORT"
            ),
            (
                options { $0.turnTTL = 59 },
                "--turn-ttl must be at least 60 seconds (it should outlast the longest call)"
            ),
            (
                options {
                    $0.turnSecretFile = "/x"
                    $0.turnSecret = "x"
                    $0.turnURL = "turn:a:1"
                },
                "--turn-secret-file replaces --turn-secret (and --with-turn makes its own)"
            ),
            (
                options { $0.allowedOrigins = ["evil.example"] },
                "--allowed-origin evil.example is not an origin: give scheme://host[:port], e.g. https://app.example.org"
            ),
        ]
    )
    func invalid(options: ServerOptions, message: String) {
        #expect(throws: ServerOptions.Invalid(description: message)) { try options.validate() }
    }

    @Test("an unusable store is refused before anything starts")
    func store() {
        #expect(throws: ServerOptions.Invalid.self) { try Self.options { $0.store = "mysql://x" }.validate() }
    }

    @Test("the TURN host is read from turn: and turns: URLs")
    func turnHost() {
        #expect(ServerOptions.host(ofTURNURL: "turn:turn.example.org:3478") == "turn.example.org")
        #expect(ServerOptions.host(ofTURNURL: "turns:10.0.0.5:5349?transport=tcp") == "10.0.0.5")
        #expect(ServerOptions.host(ofTURNURL: "turn:relay") == "relay")
        #expect(ServerOptions.host(ofTURNURL: "relay") == nil)
    }
}
