import Foundation
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport
import ToukanUploader

/// The uploader against a real HTTP server on a loopback port (``FakeUploadServer``), directly or through a
/// ``FaultyProxy`` that cuts connections.
@Suite("ToukanUploader: POST /upload and tus over HTTP", .timeLimit(.minutes(3)))
struct ToukanUploaderTests {
    static func uploader(port: Int, tusThreshold: Int64 = 8 << 20, chunk: Int = 64 << 10) -> ToukanUploader {
        // async-http-client keeps retrying a refused connection until the connect timeout: keep it short here.
        ToukanUploader(
            configuration: .init(
                server: URL(string: "http://127.0.0.1:\(port)")!, tusThreshold: tusThreshold, tusChunkSize: chunk,
                streamChunkSize: 16 << 10, connectTimeout: .seconds(2), readTimeout: .seconds(30)))
    }

    @Test("an uploader dropped without shutdown() closes by itself (it crashed the whole test process before)")
    func droppedWithoutShutdown() async throws {
        for _ in 0..<3 {
            // As a command or a test that ends by an error before its shutdown() leaves it.
            let uploader = Self.uploader(port: 9)
            #expect(uploader.configuration.connectTimeout == .seconds(2))
        }
        let shutDown = Self.uploader(port: 9)
        try await shutDown.shutdown()
        try await Task.sleep(for: .milliseconds(200))  // the background shutdowns finish; the process lives on
    }

    @Test(
        "POST /upload: the file arrives byte-identical under field `file`, with the Idempotency-Key, progress to the end"
    )
    func multipart() async throws {
        let directory = try RecordingFiles.dataDirectory()
        let (recording, file, bytes) = try RecordingFiles.make(1, size: 300_001, in: directory)
        let server = FakeUploadServer()
        let reports = UploadReports()
        let outcome = try await server.run { port in
            let uploader = Self.uploader(port: port)
            let outcome = await uploader.upload(recording, file: file, report: reports.add)
            try await uploader.shutdown()
            return outcome
        }
        let memory = try #require(server.memories.first)
        #expect(outcome == .uploaded(memoryId: memory.id))
        #expect(server.memories.count == 1)
        #expect(memory.bytes == bytes, "the bytes that arrived differ from the file")
        #expect(memory.fileName == file.lastPathComponent)
        #expect(server.received.map(\.idempotencyKey) == [recording.idempotencyKey.rawValue])
        guard case .progress(let sent, let total) = reports.all.last else {
            Issue.record("no progress reported: \(reports.all)")
            return
        }
        #expect(sent == total && total > Int64(bytes.count))
        #expect(reports.all.count > 3, "progress comes a chunk at a time")
    }

    @Test("tus above the threshold: chunks with checksums, offsets reported for the ledger, the file whole")
    func tus() async throws {
        let directory = try RecordingFiles.dataDirectory()
        let (recording, file, bytes) = try RecordingFiles.make(2, size: 200_000, in: directory)
        let server = FakeUploadServer()
        let reports = UploadReports()
        let outcome = try await server.run { port in
            let uploader = Self.uploader(port: port, tusThreshold: 100_000, chunk: 64 << 10)
            let outcome = await uploader.upload(recording, file: file, report: reports.add)
            try await uploader.shutdown()
            return outcome
        }
        let tus = server.tus
        let upload = try #require(tus.uploads.values.first)
        #expect(outcome == .uploaded(memoryId: try #require(upload.memoryId)))
        #expect(upload.bytes == bytes)
        #expect(upload.key == recording.idempotencyKey)
        #expect(server.memories.isEmpty && tus.memoriesMade == 1)
        #expect(server.received.filter { $0.method == "PATCH" }.map(\.uploadOffset) == [0, 65_536, 131_072, 196_608])
        #expect(reports.storedOffsets == [0, 65_536, 131_072, 196_608, 200_000])
    }

    @Test("tus cut mid-upload by the network: the next attempt resumes at the server's offset; one memory, whole")
    func tusResumesAfterCut() async throws {
        let directory = try RecordingFiles.dataDirectory()
        let (original, file, bytes) = try RecordingFiles.make(3, size: 400_000, in: directory)
        let server = FakeUploadServer()
        let reports = UploadReports()
        let (first, second, recording) = try await server.run { port in
            let proxy = FaultyProxy(target: port)
            // The creation and two chunks go through (a connection each, or one kept alive); the cut comes inside
            // the third chunk's body.
            proxy.inject(.cutRequest(afterBytes: 2 * 100_000 + 60_000))
            return try await proxy.run { proxyPort in
                let uploader = Self.uploader(port: proxyPort, tusThreshold: 1, chunk: 100_000)
                let first = await uploader.upload(original, file: file, report: reports.add)
                // What the ledger would hold: the last offset and Location the server confirmed.
                let recording = try reports.ledgerRow(original)
                let second = await uploader.upload(recording, file: file, report: reports.add)
                try await uploader.shutdown()
                return (first, second, recording)
            }
        }
        guard case .failed(.network) = first else {
            Issue.record("the cut attempt should fail as a network failure, got \(first)")
            return
        }
        #expect(recording.uploadOffset > 0, "the first attempt stored part of the file before the cut")
        let patches = server.received.filter { $0.method == "PATCH" }.compactMap(\.uploadOffset)
        let resumedAt = server.received.drop { $0.method != "HEAD" }.first { $0.method == "PATCH" }?.uploadOffset
        #expect(resumedAt == recording.uploadOffset, "the second attempt asks HEAD, then resumes there: \(patches)")
        let tus = server.tus
        #expect(tus.uploads.count == 1 && tus.memoriesMade == 1)
        let upload = try #require(tus.uploads.values.first)
        #expect(upload.bytes == bytes)
        #expect(second == .uploaded(memoryId: try #require(upload.memoryId)))
    }

    @Test("a response lost after the server stored the upload: the retry with the same key gets the same memory")
    func lostResponse() async throws {
        let directory = try RecordingFiles.dataDirectory()
        let (recording, file, bytes) = try RecordingFiles.make(4, size: 50_000, in: directory)
        let server = FakeUploadServer()
        let (first, second) = try await server.run { port in
            let proxy = FaultyProxy(target: port)
            proxy.inject(.dropResponse)
            return try await proxy.run { proxyPort in
                let uploader = Self.uploader(port: proxyPort)
                let first = await uploader.upload(recording, file: file) { _ in }
                let second = await uploader.upload(recording, file: file) { _ in }
                try await uploader.shutdown()
                return (first, second)
            }
        }
        guard case .failed(let failure) = first, failure.isRetryable else {
            Issue.record("the lost answer should be a retryable failure, got \(first)")
            return
        }
        #expect(server.memories.count == 1, "one memory, not two")
        #expect(second == .uploaded(memoryId: try #require(server.memories.first?.id)))
        #expect(server.memories.first?.bytes == bytes)
        let keys = server.received.map(\.idempotencyKey)
        #expect(keys == [recording.idempotencyKey.rawValue, recording.idempotencyKey.rawValue])
    }

    @Test("the server's refusals come back classified, with its message and Retry-After")
    func refusals() async throws {
        let directory = try RecordingFiles.dataDirectory()
        let (recording, file, _) = try RecordingFiles.make(5, size: 1_000, in: directory)
        let server = FakeUploadServer()
        server.script(status: 503, message: "busy, try later", headers: ["Retry-After": "7"])
        server.script(status: 415, message: "this is a WAV file, not AAC/M4A audio")
        let outcomes = try await server.run { port in
            let uploader = Self.uploader(port: port)
            var outcomes: [UploadOutcome] = []
            for _ in 0..<2 { outcomes.append(await uploader.upload(recording, file: file) { _ in }) }
            try await uploader.shutdown()
            return outcomes
        }
        #expect(
            outcomes == [
                .failed(.server(status: 503, message: "busy, try later", retryAfter: 7)),
                .failed(.server(status: 415, message: "this is a WAV file, not AAC/M4A audio", retryAfter: nil)),
            ])
    }

    @Test("no server: a network failure (retryable); a missing file: a local failure (not)")
    func noServerAndNoFile() async throws {
        let directory = try RecordingFiles.dataDirectory()
        let (recording, file, _) = try RecordingFiles.make(6, size: 1_000, in: directory)
        let uploader = Self.uploader(port: try await FreePort.take())
        let refused = await uploader.upload(recording, file: file) { _ in }
        let missing = await uploader.upload(
            recording, file: directory.appendingPathComponent("recordings/none.m4a")
        ) { _ in }
        try await uploader.shutdown()
        guard case .failed(let network) = refused, case .network = network else {
            Issue.record("expected a network failure, got \(refused)")
            return
        }
        guard case .failed(let local) = missing, case .localFile = local, !local.isRetryable else {
            Issue.record("expected a local file failure, got \(missing)")
            return
        }
    }
}
