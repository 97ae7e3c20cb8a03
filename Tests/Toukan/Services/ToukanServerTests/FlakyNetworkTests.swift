import Foundation
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport
import ToukanUploader

/// Our client (ToukanUploader, as the daemon configures it but with small chunks) against the real
/// `toukan-server` process through a TCP proxy that cuts connections mid-upload or loses the server's answer:
/// every upload ends as exactly one memory, byte-identical, and a cut tus upload resumes at the server's offset.
@Suite("toukan-server behind a flaky network", .serialized, .heavy(cores: 0.5, "a server process, a proxy"))
struct FlakyNetworkTests {
    /// One test's world: a recording (a real M4A) in a client data directory, a fresh `toukan-server` (processing
    /// off) on a data directory of its own, and a ``FaultyProxy`` in front of it.
    struct Scene {
        let recording: Recording
        let file: URL
        let bytes: Data
        let server: ToukanServerProcess
        let serverDirectory: URL
        let proxy: FaultyProxy
        private let clientDirectory: URL

        static func make(seconds: Double) async throws -> Scene {
            let audio = try await AudioFixtures.tone(seconds: seconds, name: "tone-\(Int(seconds))s")
            let client = try RecordingFiles.dataDirectory()
            let row = LedgerFixtures.pending(1)
            let recording = Recording(
                id: row.id, filePath: row.filePath, recordedAt: row.recordedAt, duration: seconds,
                idempotencyKey: IdempotencyKey(randomBytes: (0..<16).map { _ in UInt8.random(in: 0...255) }))
            let file = client.appendingPathComponent(recording.filePath)
            try FileManager.default.copyItem(at: audio, to: file)
            let directory = try Subprocess.temporaryDirectory("toukan-flaky")
            let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
            return Scene(
                recording: recording, file: file, bytes: try Data(contentsOf: file), server: server,
                serverDirectory: directory, proxy: FaultyProxy(target: server.port), clientDirectory: client)
        }

        func close() async {
            await server.stop()
            try? FileManager.default.removeItem(at: clientDirectory)
            try? FileManager.default.removeItem(at: serverDirectory)
        }

        /// Two attempts through the proxy, as the queue would make them: the first, then `between` (checks while
        /// nothing runs), then the second from the ledger row the first left (its confirmed tus offset).
        func twoAttempts(
            tusThreshold: Int64, chunk: Int = 64 << 10, between: @escaping @Sendable () async throws -> Void = {}
        ) async throws -> (first: UploadOutcome, second: UploadOutcome, resumed: Recording, resumedAt: [Int64]) {
            let firstReports = UploadReports()
            let secondReports = UploadReports()
            let (recording, file) = (recording, file)
            let (first, second, resumed) = try await proxy.run { port in
                let uploader = ToukanUploader(
                    configuration: .init(
                        server: URL(string: "http://127.0.0.1:\(port)")!, tusThreshold: tusThreshold,
                        tusChunkSize: chunk, connectTimeout: .seconds(5), readTimeout: .seconds(30)))
                let first = await uploader.upload(recording, file: file, report: firstReports.add)
                try await between()
                let resumed = try firstReports.ledgerRow(recording)
                let second = await uploader.upload(resumed, file: file, report: secondReports.add)
                try await uploader.shutdown()
                return (first, second, resumed)
            }
            return (first, second, resumed, secondReports.storedOffsets)
        }

        /// The server's one memory: its id, and its stored file's bytes.
        func onlyMemory() async throws -> (id: String, stored: Data) {
            let memories = try await server.memories()
            #expect(memories.count == 1, "exactly one memory: \(memories)")
            let id = try #require(memories.first?["memory_id"] as? String)
            return (id, try Data(contentsOf: serverDirectory.appendingPathComponent("audio/\(id).m4a")))
        }
    }

    @Test("tus cut inside a PATCH: the next attempt asks the offset and resumes there; one memory, byte-identical")
    func tusCutResumes() async throws {
        let scene = try await Scene.make(seconds: 30)
        defer { Task { await scene.close() } }
        let chunk = 64 << 10
        #expect(scene.bytes.count > 3 * chunk, "the fixture spans several chunks")
        // The creation request and two chunks pass; the cut comes half-way through the third chunk's body.
        scene.proxy.inject(.cutRequest(afterBytes: 2 * chunk + chunk / 2 + 2_000))
        let attempts = try await scene.twoAttempts(tusThreshold: 1, chunk: chunk)
        guard case .failed(let failure) = attempts.first, case .network = failure else {
            Issue.record("the cut attempt should fail as a network failure, got \(attempts.first)")
            return
        }
        #expect(attempts.resumed.uploadOffset >= Int64(2 * chunk), "two chunks were confirmed before the cut")
        let memory = try await scene.onlyMemory()
        #expect(attempts.second == .uploaded(memoryId: memory.id))
        #expect(memory.stored == scene.bytes, "the resumed upload is byte-identical")
        // The second attempt starts at the server's offset (what it confirmed, plus what arrived of the cut chunk),
        // and never goes back.
        let offsets = attempts.resumedAt
        #expect(offsets.first.map { $0 >= attempts.resumed.uploadOffset } == true, "\(offsets), \(attempts.resumed)")
        #expect(offsets == offsets.sorted() && offsets.last == Int64(scene.bytes.count), "\(offsets)")
    }

    @Test("POST /upload whose 201 is lost: the retry with the same key gets the same memory, not a second")
    func lostCreatedAnswer() async throws {
        let scene = try await Scene.make(seconds: 4)
        defer { Task { await scene.close() } }
        scene.proxy.inject(.dropResponse)
        let attempts = try await scene.twoAttempts(tusThreshold: .max)
        guard case .failed(let failure) = attempts.first, failure.isRetryable else {
            Issue.record("a lost answer is a retryable failure, got \(attempts.first)")
            return
        }
        let memory = try await scene.onlyMemory()
        #expect(attempts.second == .uploaded(memoryId: memory.id))
        #expect(memory.stored == scene.bytes)
    }

    @Test("tus whose last PATCH answer is lost: the retry learns from HEAD that it is complete, same memory")
    func lostLastPatchAnswer() async throws {
        let scene = try await Scene.make(seconds: 4)
        defer { Task { await scene.close() } }
        // One chunk holds the whole file: the creation's answer arrives, the PATCH's does not.
        scene.proxy.loseAnswer(toRequestStartingWith: "PATCH ")
        let attempts = try await scene.twoAttempts(tusThreshold: 1, chunk: 1 << 20)
        guard case .failed(let failure) = attempts.first, failure.isRetryable else {
            Issue.record("a lost answer is a retryable failure, got \(attempts.first)")
            return
        }
        let memory = try await scene.onlyMemory()
        #expect(attempts.second == .uploaded(memoryId: memory.id))
        #expect(memory.stored == scene.bytes)
    }

    @Test("POST /upload cut mid-body: nothing is stored; the next attempt makes the one memory")
    func cutMultipartStoresNothing() async throws {
        let scene = try await Scene.make(seconds: 30)
        defer { Task { await scene.close() } }
        scene.proxy.inject(.cutRequest(afterBytes: scene.bytes.count / 2))
        let (server, incoming) = (scene.server, scene.serverDirectory.appendingPathComponent("incoming"))
        let attempts = try await scene.twoAttempts(tusThreshold: .max) {
            try await eventually("the server to drop the cut upload's partial file") {
                try FileManager.default.contentsOfDirectory(atPath: incoming.path).isEmpty
            }
            #expect(try await server.memories().isEmpty, "a cut upload makes no memory")
        }
        guard case .failed(let failure) = attempts.first, failure.isRetryable else {
            Issue.record("a cut upload is a retryable failure, got \(attempts.first)")
            return
        }
        let memory = try await scene.onlyMemory()
        #expect(attempts.second == .uploaded(memoryId: memory.id))
        #expect(memory.stored == scene.bytes)
    }
}
