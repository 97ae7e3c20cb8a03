import BeMyEarsServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TestSupport
import Testing

/// `GET /health` and the browser client, through a live server built by `buildApplication`.
@Suite("HTTP: health and the browser client")
struct HTTPTests {
    func app() async throws -> some ApplicationProtocol {
        try await buildApplication(
            BeMyEarsServerConfiguration(
                port: 0,
                advertisesService: false,
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            )
        )
    }

    @Test func healthIsOKOnceListening() async throws {
        try await app().test(.live) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "ok\n")
            }
        }
    }

    /// Each file with its media type, the strict CSP and the other security headers; `/` is index.html.
    @Test(arguments: [
        ("/", "text/html; charset=utf-8", "app.js"),
        ("/index.html", "text/html; charset=utf-8", "Go Online"),
        ("/app.js", "text/javascript; charset=utf-8", "use strict"),
        ("/style.css", "text/css; charset=utf-8", "{"),
    ])
    func staticFile(_ path: String, _ contentType: String, _ snippet: String) async throws {
        try await app().test(.live) { client in
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == contentType)
                let csp = response.headers[.contentSecurityPolicy] ?? ""
                #expect(csp.hasPrefix("default-src 'self'"))
                #expect(!csp.contains("unsafe"))
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
                #expect(String(buffer: response.body).contains(snippet))
            }
        }
    }

    /// Only the client's own files are served: no directory listing, no path tricks.
    @Test(arguments: ["/nope.js", "/../Package.swift", "/Public/app.js", "/%2e%2e/README.md", "/ws"])
    func unknownPathsAre404(_ path: String) async throws {
        try await app().test(.live) { client in
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// The files served are byte for byte the ones in Sources/BeMyEars/Services/BeMyEarsServer/Public (served as is).
    @Test func servesThePublicDirectoryUnchanged() async throws {
        let source = Fixtures.repositoryRoot.appendingPathComponent(
            "Sources/BeMyEars/Services/BeMyEarsServer/Public/app.js")
        let expected = try String(contentsOf: source, encoding: .utf8)
        try await app().test(.live) { client in
            try await client.execute(uri: "/app.js", method: .get) { response in
                #expect(String(buffer: response.body) == expected)
            }
        }
    }
}
