import CanonicalJSON
import ControlSocket
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite("Control socket: one JSON request, JSON lines back, only for its owner")
struct ControlSocketTests {
    /// A short directory (a socket path must stay under 104 bytes), removed by the caller.
    static func directory() throws -> URL {
        let url = URL(fileURLWithPath: "/tmp/cs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return url
    }

    static func echo(_ request: JSONValue) -> AsyncStream<JSONValue> {
        AsyncStream { continuation in
            continuation.yield(["ok": true, "request": request])
            continuation.finish()
        }
    }

    @Test("a request gets its answer; the socket is owner-only and removed at close")
    func roundTrip() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("control.sock").path
        let server = try await ControlSocketServer.start(path: path, handler: Self.echo)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let answer = try await ControlSocketClient.ask(path: path, ["command": "status"])
        #expect(answer == ["ok": true, "request": ["command": "status"]])
        await server.close()
        #expect(!FileManager.default.fileExists(atPath: path))
        let refused = await #expect(throws: ControlSocketError.self) {
            try await ControlSocketClient.ask(path: path, ["command": "status"])
        }
        #expect(refused?.code == .notRunning)
    }

    @Test("a subscription streams lines until the client leaves, which ends the handler's stream")
    func subscription() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("control.sock").path
        let endedBox = EndedFlag()
        let server = try await ControlSocketServer.start(path: path) { _ in
            AsyncStream { continuation in
                let ticker = Task {
                    var tick = 0
                    while !Task.isCancelled {
                        tick += 1
                        continuation.yield(["tick": .number(Double(tick))])
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
                continuation.onTermination = { _ in
                    ticker.cancel()
                    endedBox.set()
                }
            }
        }
        defer { Task { await server.close() } }
        var ticks: [JSONValue] = []
        for try await line in ControlSocketClient.request(path: path, ["command": "watch"]) {
            ticks.append(line)
            if ticks.count == 3 { break }
        }
        #expect(ticks == [["tick": 1], ["tick": 2], ["tick": 3]])
        try await eventually("the server notices the client left") { endedBox.isSet }
    }

    @Test("a second server on a live socket is refused; a stale socket file is replaced")
    func exclusive() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("control.sock").path
        // A file left behind by a daemon that died: nothing answers on it.
        FileManager.default.createFile(atPath: path, contents: Data("stale".utf8))
        let server = try await ControlSocketServer.start(path: path, handler: Self.echo)
        let second = await #expect(throws: ControlSocketError.self) {
            try await ControlSocketServer.start(path: path, handler: Self.echo)
        }
        #expect(second?.code == .alreadyRunning)
        #expect(try await ControlSocketClient.ask(path: path, "ping") == ["ok": true, "request": "ping"])
        await server.close()
    }

    @Test("a request that is not JSON, or too long, gets an error line")
    func badRequests() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("control.sock").path
        let server = try await ControlSocketServer.start(path: path, handler: Self.echo)
        defer { Task { await server.close() } }
        // An independent client: Python's socket module.
        let script = """
            import socket, sys
            for payload in [b'{"command": ', b'x' * 70000 + b'\\n', b'{"command":"status"}\\n']:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                s.sendall(payload if payload.endswith(b'\\n') else payload + b'\\n')
                data = b''
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                sys.stdout.write(data.decode())
                s.close()
            """
        let result = try await Subprocess.run("python3", ["-c", script, path])
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first?.contains(#""error":"the request is not JSON"#) == true)
        #expect(lines.dropFirst().first?.contains("longer than 65536 bytes") == true)
        #expect(lines.last == #"{"ok":true,"request":{"command":"status"}}"#)
    }

    @Test("a path too long for a Unix socket is refused with what to do")
    func longPath() async {
        let path = "/tmp/" + String(repeating: "d", count: 120) + "/control.sock"
        let refused = await #expect(throws: ControlSocketError.self) {
            try await ControlSocketServer.start(path: path, handler: Self.echo)
        }
        #expect(refused?.message.contains("shorter data directory") == true)
    }
}

/// Set once, from any thread.
final class EndedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
