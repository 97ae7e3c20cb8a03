import Foundation
import TestSupport
import Testing
import ToukanCore
import ToukanStore
import ToukanTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 13's "a network namespace whose link goes down and up → upload starts within 2 s of link up": the upload
/// loop (`upload-loop-probe`, with the real NetworkWatch) in namespace H, an independent Python `POST /upload`
/// server in namespace G, joined by a veth pair; G's end goes down, then up.
@Suite("ToukanUploads: the link returns in a network namespace", .serialized, .heavy(cores: 0.25, "network namespaces"))
struct LinkReturnTests {
    static let uploadDeadline = Duration.seconds(2)

    @Test("a queued recording waits while the link is down and starts uploading within 2 s of the link coming up")
    func uploadStartsWhenLinkReturns() async throws {
        guard NetworkNamespace.available(for: "the link-return upload test", tools: ["ip", "python3"]) else { return }
        try await NetworkNamespace.withPair(prefix: "tu", subnet: "10.81.0") { pair in
            try await run(client: pair.host, server: pair.gateway)
        }
    }

    func run(client: String, server: String) async throws {
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/toukan/upload_server.py").path
        let uploads = try BackgroundProcess(
            "ip", ["netns", "exec", server, try Subprocess.resolve("python3"), script, "10.81.0.2", "8080"])
        let serverReady = await uploads.line(timeout: .seconds(60)) { $0.contains(#""event": "ready""#) }
        try #require(serverReady != nil, "the Python upload server did not start: \(uploads.errorOutput)")

        // A recording waits in the ledger; the link to the server goes down.
        let directory = try RecordingFiles.dataDirectory()
        let (recording, _, _) = try RecordingFiles.make(1, size: 40_000, in: directory)
        let ledger = try ToukanDatabase(directory: directory)
        try ledger.add(recording)
        try await NetworkNamespace.ip("-n", server, "link", "set", server, "down")
        // The loop starts offline: the kernel reports the carrier loss a moment after `ip link set` returns.
        try await NetworkNamespace.waitForCarrier(client, in: client, present: false)

        let loop = try BackgroundProcess(
            "ip",
            [
                "netns", "exec", client, try Subprocess.builtProduct("upload-loop-probe"), directory.path,
                "http://10.81.0.2:8080",
            ])
        let loopReady = await loop.line(timeout: .seconds(60)) { $0.contains(#""event":"ready""#) }
        let readyLine = try #require(loopReady, "the upload loop did not start: \(loop.errorOutput)")
        #expect(readyLine.contains(#""online":false"#), "the link is down: \(readyLine)")

        // While the link is down nothing goes out (the loop's periodic recheck is 30 s).
        try await Task.sleep(for: .seconds(1))
        #expect(!uploads.output.contains { $0.contains(#""event": "request""#) }, "an upload went out while offline")
        #expect(try ledger.recording(id: recording.id)?.uploadStatus == .pending)

        try await NetworkNamespace.ip("-n", server, "link", "set", server, "up")
        let linkUp = ContinuousClock.now
        let started = await uploads.line(timeout: Self.uploadDeadline) { $0.contains(#""event": "request""#) }
        if started != nil {
            // A figure for the reader, not an assertion (the bound above is the assertion).
            FileHandle.standardError.write(
                Data("link up → upload request at the server: \(ContinuousClock.now - linkUp)\n".utf8))
        }
        #expect(
            started != nil,
            """
            no upload request reached the server within \(Self.uploadDeadline) of the link coming up; \
            the loop logged: \(loop.errorOutput)
            """)
        try await eventually("the recording uploaded (ledger read from this process)", timeout: .seconds(30)) {
            try ledger.recording(id: recording.id)?.uploadStatus == .uploaded
        }
        let stored = uploads.output.first { $0.contains(#""event": "stored""#) } ?? ""
        #expect(stored.contains(recording.idempotencyKey.rawValue))
        let memoryId = try #require(try ledger.recording(id: recording.id)?.memoryId)
        #expect(stored.contains(memoryId), "the ledger keeps the server's memory id: \(stored)")
        let storedBytes = stored.split(separator: ",").first { $0.contains(#""bytes":"#) }
            .flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
        #expect((storedBytes ?? 0) > 40_000, "the whole file and the multipart framing arrived: \(stored)")
        _ = await loop.stop()
        _ = await uploads.stop()
    }
}
