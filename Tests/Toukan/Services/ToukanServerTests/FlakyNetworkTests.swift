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
    /// The recording's file in a client data directory: a real M4A, `seconds` long.
    static func recordingFile(seconds: Double) async throws -> (Recording, URL, Data, URL) {
        let audio = try await AudioFixtures.tone(seconds: seconds, name: "tone-\(Int(seconds))s")
        let client = try RecordingFiles.dataDirectory()
        var recording = LedgerFixtures.pending(UInt8.random(in: 1...200))
        recording = Recording(
            id: recording.id, filePath: recording.filePath, recordedAt: recording.recordedAt, duration: seconds,
            idempotencyKey: IdempotencyKey(randomBytes: (0..<16).map { _ in UInt8.random(in: 0...255) }))
        let file = client.appendingPathComponent(recording.filePath)
        try FileManager.default.copyItem(at: audio, to: file)
        return (recording, file, try Data(contentsOf: file), client)
    }

    static func uploader(port: Int, tusThreshold: Int64, chunk: Int = 64 << 10) -> ToukanUploader {
        ToukanUploader(
            configuration: .init(
                server: URL(string: "http://127.0.0.1:\(port)")!, tusThreshold: tusThreshold, tusChunkSize: chunk,
                connectTimeout: .seconds(5), readTimeout: .seconds(30)))
    }

    /// The server's one memory: its id, and its stored file's bytes.
    static func onlyMemory(_ server: ToukanServerProcess, dataDirectory: URL) async throws -> (String, Data) {
        let memories = try await server.memories()
        #expect(memories.count == 1, "exactly one memory: \(memories)")
        let id = try #require(memories.first?["memory_id"] as? String)
        let stored = dataDirectory.appendingPathComponent("audio/\(id).m4a")
        return (id, try Data(contentsOf: stored))
    }

    @Test("tus cut inside a PATCH: the next attempt asks the offset and resumes there; one memory, byte-identical")
    func tusCutResumes() async throws {
        let (original, file, bytes, client) = try await Self.recordingFile(seconds: 30)
        defer { try? FileManager.default.removeItem(at: client) }
        let directory = try Subprocess.temporaryDirectory("toukan-flaky-tus")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let chunk = 64 << 10
        #expect(bytes.count > 3 * chunk, "the fixture spans several chunks")
        let proxy = FaultyProxy(target: server.port)
        // The creation request and two chunks pass; the cut comes half-way through the third chunk's body.
        proxy.inject(.cutRequest(afterBytes: 2 * chunk + chunk / 2 + 2_000))
        let firstReports = UploadReports()
        let secondReports = UploadReports()
        let (first, second, resumed) = try await proxy.run { port in
            let uploader = Self.uploader(port: port, tusThreshold: 1, chunk: chunk)
            let first = await uploader.upload(original, file: file, report: firstReports.add)
            let resumed = try firstReports.ledgerRow(original)
            let second = await uploader.upload(resumed, file: file, report: secondReports.add)
            try await uploader.shutdown()
            return (first, second, resumed)
        }
        guard case .failed(let failure) = first, case .network = failure else {
            Issue.record("the cut attempt should fail as a network failure, got \(first)")
            return
        }
        #expect(resumed.uploadOffset >= Int64(2 * chunk), "two chunks were confirmed before the cut")
        let (id, stored) = try await Self.onlyMemory(server, dataDirectory: directory)
        #expect(second == .uploaded(memoryId: id))
        #expect(stored == bytes, "the resumed upload is byte-identical")
        // The second attempt starts at the server's offset (what it confirmed, plus what arrived of the cut chunk),
        // and never goes back.
        let offsets = secondReports.storedOffsets
        #expect(offsets.first.map { $0 >= resumed.uploadOffset } == true, "resumed at \(offsets), stored \(resumed)")
        #expect(offsets == offsets.sorted() && offsets.last == Int64(bytes.count), "\(offsets)")
    }

    @Test("POST /upload whose 201 is lost: the retry with the same key gets the same memory, not a second")
    func lostCreatedAnswer() async throws {
        let (recording, file, bytes, client) = try await Self.recordingFile(seconds: 4)
        defer { try? FileManager.default.removeItem(at: client) }
        let directory = try Subprocess.temporaryDirectory("toukan-flaky-201")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let proxy = FaultyProxy(target: server.port)
        proxy.inject(.dropResponse)
        let (first, second) = try await proxy.run { port in
            let uploader = Self.uploader(port: port, tusThreshold: .max)
            let first = await uploader.upload(recording, file: file) { _ in }
            let second = await uploader.upload(recording, file: file) { _ in }
            try await uploader.shutdown()
            return (first, second)
        }
        guard case .failed(let failure) = first, failure.isRetryable else {
            Issue.record("a lost answer is a retryable failure, got \(first)")
            return
        }
        let (id, stored) = try await Self.onlyMemory(server, dataDirectory: directory)
        #expect(second == .uploaded(memoryId: id))
        #expect(stored == bytes)
    }

    @Test("tus whose last PATCH answer is lost: the retry learns from HEAD that it is complete, same memory")
    func lostLastPatchAnswer() async throws {
        let (original, file, bytes, client) = try await Self.recordingFile(seconds: 4)
        defer { try? FileManager.default.removeItem(at: client) }
        let directory = try Subprocess.temporaryDirectory("toukan-flaky-tus-204")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let proxy = FaultyProxy(target: server.port)
        // One chunk holds the whole file: the creation's answer arrives, the PATCH's does not.
        proxy.loseAnswer(toRequestStartingWith: "PATCH ")
        let reports = UploadReports()
        let (first, second) = try await proxy.run { port in
            let uploader = Self.uploader(port: port, tusThreshold: 1, chunk: 1 << 20)
            let first = await uploader.upload(original, file: file, report: reports.add)
            let second = await uploader.upload(try reports.ledgerRow(original), file: file, report: reports.add)
            try await uploader.shutdown()
            return (first, second)
        }
        guard case .failed(let failure) = first, failure.isRetryable else {
            Issue.record("a lost answer is a retryable failure, got \(first)")
            return
        }
        let (id, stored) = try await Self.onlyMemory(server, dataDirectory: directory)
        #expect(second == .uploaded(memoryId: id))
        #expect(stored == bytes)
    }

    @Test("POST /upload cut mid-body: nothing is stored; the next attempt makes the one memory")
    func cutMultipartStoresNothing() async throws {
        let (recording, file, bytes, client) = try await Self.recordingFile(seconds: 30)
        defer { try? FileManager.default.removeItem(at: client) }
        let directory = try Subprocess.temporaryDirectory("toukan-flaky-post")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let proxy = FaultyProxy(target: server.port)
        proxy.inject(.cutRequest(afterBytes: bytes.count / 2))
        let first = try await proxy.run { port in
            let uploader = Self.uploader(port: port, tusThreshold: .max)
            let first = await uploader.upload(recording, file: file) { _ in }
            try await uploader.shutdown()
            return first
        }
        guard case .failed(let failure) = first, failure.isRetryable else {
            Issue.record("a cut upload is a retryable failure, got \(first)")
            return
        }
        try await eventually("the server to drop the cut upload's partial file") {
            try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("incoming").path)
                .isEmpty
        }
        #expect(try await server.memories().isEmpty, "a cut upload makes no memory")
        let uploader = Self.uploader(port: server.port, tusThreshold: .max)
        let second = await uploader.upload(recording, file: file) { _ in }
        try await uploader.shutdown()
        let (id, stored) = try await Self.onlyMemory(server, dataDirectory: directory)
        #expect(second == .uploaded(memoryId: id))
        #expect(stored == bytes)
    }
}
