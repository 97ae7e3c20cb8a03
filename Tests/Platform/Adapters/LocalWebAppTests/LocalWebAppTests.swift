import Foundation
import Hummingbird
import LocalWebApp
import NIOCore
import TestSupport
import Testing

@Suite("A local web app: loopback, a secret in every address, security headers")
struct LocalWebAppTests {
    @Test("the secret: 32 hex digits, fresh every time, compared whole, never printed")
    func secret() {
        let secret = WebSecret()
        #expect(secret.text.count == 32 && secret.text.allSatisfy(\.isHexDigit))
        #expect(WebSecret().text != secret.text)
        #expect(secret.matches(secret.text))
        #expect(!secret.matches(String(secret.text.dropLast())))
        #expect(!secret.matches(secret.text + "0"))
        #expect(!secret.matches(""))
        #expect(!"\(secret)".contains(secret.text))
    }

    /// A server with one file and one API route, in a temporary directory.
    static func withServer(_ body: (LocalWebServer, WebSecret) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webapp-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "<!doctype html><title>t</title>".write(
            to: directory.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try "let x = 1;".write(to: directory.appendingPathComponent("app.js"), atomically: true, encoding: .utf8)
        let assets = try StaticAssets(directory: directory)
        let secret = WebSecret()
        let server = try await LocalWebServer.start(port: 0, secret: secret, name: "testapp") { router in
            assets.addRoutes(to: router)
            router.get("/api/echo") { request, _ in request.uri.query ?? "" }
        }
        do {
            try await body(server, secret)
        } catch {
            await server.close()
            throw error
        }
        await server.close()
    }

    @Test("only addresses with the secret are served; everything else is refused with where to look")
    func gate() async throws {
        try await Self.withServer { server, secret in
            #expect(server.url == "http://127.0.0.1:\(server.port)/s/\(secret.text)/")
            let page = try await LoopbackHTTP.get(server.url)
            #expect(page.status == 200 && page.text.contains("<title>t</title>"))
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            let script = try await LoopbackHTTP.get(server.url + "app.js")
            #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
            let echo = try await LoopbackHTTP.get(server.url + "api/echo?a=1")
            #expect(echo.status == 200 && echo.text == "a=1")

            let base = "http://127.0.0.1:\(server.port)"
            let wrong = String(secret.text.reversed())
            for path in [
                "/", "/app.js", "/s/", "/s/\(wrong)/", "/s/\(wrong)/app.js", "/s/\(secret.text.dropLast())/",
                "/api/echo", "/s/\(secret.text)x/",
            ] {
                let refused = try await LoopbackHTTP.get(base + path)
                #expect(refused.status == 403, "\(path)")
                #expect(refused.text.contains("secret link that testapp printed"), "\(path)")
                #expect(!refused.text.contains(secret.text), "\(path)")
            }
            let redirect = try await LoopbackHTTP.get(base + "/s/\(secret.text)")
            #expect(redirect.status == 303 && redirect.headers["location"] == "/s/\(secret.text)/")
            // Nothing outside the app's directory is reachable.
            let traversal = try await LoopbackHTTP.get(server.url + "..%2F..%2Fetc%2Fpasswd")
            #expect(traversal.status == 404)
        }
    }

    @Test("every answer carries the browser security headers")
    func headers() async throws {
        try await Self.withServer { server, _ in
            for path in ["", "app.js", "api/echo", "missing"] {
                let answer = try await LoopbackHTTP.get(server.url + path)
                #expect(answer.headers["content-security-policy"]?.hasPrefix("default-src 'self'") == true, "\(path)")
                #expect(answer.headers["x-content-type-options"] == "nosniff")
                #expect(answer.headers["referrer-policy"] == "no-referrer")
            }
        }
    }

    @Test("it listens on loopback only, and a taken port is refused with what to do")
    func loopbackAndTakenPort() async throws {
        try await Self.withServer { server, _ in
            await #expect(throws: LocalWebAppError.self) {
                let second = try await LocalWebServer.start(port: server.port, name: "testapp") { _ in }
                await second.close()
            }
            do {
                _ = try await LocalWebServer.start(port: server.port, name: "testapp") { _ in }
            } catch let error as LocalWebAppError {
                #expect(error.description.contains("is the port taken?"))
            }
        }
    }

    @Test("a directory without index.html is refused")
    func missingIndex() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webapp-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: LocalWebAppError.self) { try StaticAssets(directory: directory) }
    }

    @Test("server-sent events: one event per name and data line, keep-alive comments")
    func serverSentEvents() async throws {
        let event = ServerSentEvent(name: "state", data: "{\"a\":1}")
        #expect(String(buffer: event.encoded) == "event: state\ndata: {\"a\":1}\n\n")
        let lines = ServerSentEvent(name: "x", data: "a\nb")
        #expect(String(buffer: lines.encoded) == "event: x\ndata: a\ndata: b\n\n")

        let (events, continuation) = AsyncStream.makeStream(of: ServerSentEvent.self)
        let secret = WebSecret()
        let server = try await LocalWebServer.start(port: 0, secret: secret, name: "testapp") { router in
            router.get("/events") { _, _ in ServerSentEvent.response(events, keepAliveInterval: .milliseconds(200)) }
        }
        continuation.yield(ServerSentEvent(name: "hello", data: "1"))
        let received = try await LoopbackHTTP.stream(server.url + "events") { $0.contains(": keep-alive") }
        #expect(received.hasPrefix("event: hello\ndata: 1\n\n"))
        #expect(received.contains(": keep-alive"))
        continuation.finish()
        await server.close()
    }
}
