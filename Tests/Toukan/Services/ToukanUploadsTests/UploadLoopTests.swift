import Foundation
import Logging
import NetworkWatch
import Synchronization
import TestSupport
import Testing
import ToukanCore
import ToukanStore
import ToukanTestSupport
import ToukanUploader
import ToukanUploads

/// The network as a switch the test flips, announcing each flip like the kernel would.
final class NetworkSwitch: NetworkStatus {
    private let online: Mutex<Bool>
    let changes: AsyncStream<NetworkChange>
    private let continuation: AsyncStream<NetworkChange>.Continuation

    init(online: Bool) {
        self.online = Mutex(online)
        (changes, continuation) = AsyncStream.makeStream(of: NetworkChange.self)
    }

    func isOnline() -> Bool { online.withLock { $0 } }

    func set(online value: Bool) {
        online.withLock { $0 = value }
        continuation.yield(.link(index: 2))
    }
}

/// The upload loop with the real ledger (SQLite) and the real uploader against an in-test server.
@Suite("ToukanUploads: the upload queue running", .timeLimit(.minutes(3)))
struct UploadLoopTests {
    struct Setup {
        let database: ToukanDatabase
        let directory: URL
        let uploader: ToukanUploader
        let loop: UploadLoop
    }

    static func setup(
        port: Int, network: any NetworkStatus = NetworkSwitch(online: true),
        policy: UploadRetryPolicy = UploadRetryPolicy()
    ) throws -> Setup {
        let directory = try RecordingFiles.dataDirectory()
        let database = try ToukanDatabase(directory: directory)
        let uploader = ToukanUploader(
            configuration: .init(server: URL(string: "http://127.0.0.1:\(port)")!, connectTimeout: .seconds(2)))
        let loop = UploadLoop(
            database: database, dataDirectory: directory, uploader: uploader, network: network,
            queue: UploadQueue(retryPolicy: policy), recheckInterval: .seconds(1),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        return Setup(database: database, directory: directory, uploader: uploader, loop: loop)
    }

    /// Runs `loop` in the background while `body` runs.
    static func running<T: Sendable>(_ loop: UploadLoop, _ body: @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await loop.run() }
        defer { task.cancel() }
        return try await body()
    }

    static func status(_ database: ToukanDatabase, _ id: UUID) throws -> UploadStatus? {
        try database.recording(id: id)?.uploadStatus
    }

    @Test(
        "503: the server is down, not the upload: a retry is scheduled (pending, the server's message, not counted); then uploaded with the same key"
    )
    func serviceUnavailableThenUploaded() async throws {
        let server = FakeUploadServer()
        server.script(status: 503, message: "overloaded", headers: ["Retry-After": "1"])
        try await server.run { port in
            let setup = try Self.setup(port: port)
            let (recording, _, bytes) = try RecordingFiles.make(1, size: 20_000, in: setup.directory)
            try setup.database.add(recording)

            let afterFailure = try #require(await setup.loop.attempt(recording.id))
            #expect(afterFailure.uploadStatus == .pending && afterFailure.retryCount == 0)
            #expect(afterFailure.offlineAttempts == 1 && afterFailure.offlineSince != nil)
            #expect(afterFailure.lastError == "server answered 503: overloaded")
            #expect(afterFailure.retryNotBefore != nil, "the server's Retry-After is kept")
            let due = UploadQueue().dueDate(of: afterFailure, onlineSince: .distantPast)
            #expect(due > afterFailure.lastAttempt!, "the backoff puts the next attempt later")

            let uploaded = try #require(await setup.loop.attempt(recording.id))
            #expect(uploaded.uploadStatus == .uploaded && uploaded.memoryId == server.memories.first?.id)
            #expect(server.memories.first?.bytes == bytes)
            #expect(
                server.received.map(\.idempotencyKey) == Array(repeating: recording.idempotencyKey.rawValue, count: 2))
            try await setup.uploader.shutdown()
        }
    }

    @Test("415: failed at once, keeping the server's message; a manual retry queues it again")
    func unsupportedMediaFailsAtOnce() async throws {
        let server = FakeUploadServer()
        server.script(status: 415, message: "not AAC/M4A audio: the file starts with RIFF (WAV)")
        try await server.run { port in
            let setup = try Self.setup(port: port)
            let (recording, _, _) = try RecordingFiles.make(2, size: 2_000, in: setup.directory)
            try setup.database.add(recording)
            let failed = try #require(await setup.loop.attempt(recording.id))
            #expect(failed.uploadStatus == .failed && failed.retryCount == 1)
            #expect(failed.lastError == "server answered 415: not AAC/M4A audio: the file starts with RIFF (WAV)")
            #expect(
                UploadQueue().nextAction(
                    rows: try setup.database.queueRows(), connectivity: .online(since: .now), now: .now)
                    == .idle)
            try setup.database.retry(id: recording.id)
            #expect(try Self.status(setup.database, recording.id) == .pending)
            try await setup.uploader.shutdown()
        }
    }

    @Test("server down (the default policy): queued and retried with backoff, never failed; server up: uploaded")
    func serverDownThenUp() async throws {
        let port = try await FreePort.take()
        let setup = try Self.setup(port: port)
        let (recording, _, bytes) = try RecordingFiles.make(3, size: 30_000, in: setup.directory)
        try setup.database.add(recording)
        let server = FakeUploadServer()
        try await Self.running(setup.loop) {
            try await eventually("two attempts while the server is down") {
                try setup.database.recording(id: recording.id).map { $0.offlineAttempts >= 2 } ?? false
            }
            let waiting = try #require(try setup.database.recording(id: recording.id))
            #expect(waiting.uploadStatus != .failed && waiting.retryCount == 0 && waiting.offlineSince != nil)
            #expect(
                waiting.lastError == "network: cannot reach 127.0.0.1:\(port) (connection refused)",
                "a refused connection is said in words: \(waiting.lastError ?? "")")
            try await server.run(port: port) { _ in
                try await eventually("the upload once the server is up", timeout: .seconds(60)) {
                    try Self.status(setup.database, recording.id) == .uploaded
                }
            }
        }
        #expect(server.memories.count == 1 && server.memories.first?.bytes == bytes)
        #expect(try setup.database.recording(id: recording.id)?.memoryId == server.memories.first?.id)
        try await setup.uploader.shutdown()
    }

    @Test("offline: nothing is attempted; the link returns: the queued upload starts without waiting out its backoff")
    func networkReturns() async throws {
        let server = FakeUploadServer()
        try await server.run { port in
            let network = NetworkSwitch(online: false)
            // A long backoff and a long recheck: only the network event can start the upload in time.
            let setup = try Self.setup(port: port, network: network, policy: UploadRetryPolicy(firstDelay: 3_600))
            let (recording, _, _) = try RecordingFiles.make(4, size: 5_000, in: setup.directory)
            try setup.database.add(recording)
            // One failed attempt already (as if the network dropped mid-upload): its backoff is an hour.
            try setup.database.beginUpload(id: recording.id, at: Date())
            try setup.database.failAttempt(id: recording.id, .network("link down"), at: Date())
            try await Self.running(setup.loop) {
                try await Task.sleep(for: .milliseconds(500))
                #expect(server.received.isEmpty, "no attempt while offline")
                network.set(online: true)
                try await eventually("the upload after the link came back", timeout: .seconds(30)) {
                    try Self.status(setup.database, recording.id) == .uploaded
                }
            }
            #expect(server.memories.count == 1)
            try await setup.uploader.shutdown()
        }
    }

    @Test("a daemon killed mid-upload: the next loop resumes the interrupted tus upload from its offset")
    func resumesAfterRestart() async throws {
        let server = FakeUploadServer()
        try await server.run { port in
            let directory = try RecordingFiles.dataDirectory()
            let (recording, _, bytes) = try RecordingFiles.make(5, size: 300_000, in: directory)
            // The first daemon: created the tus upload and sent the first 100,000 bytes, then died.
            let uploader = ToukanUploader(
                configuration: .init(
                    server: URL(string: "http://127.0.0.1:\(port)")!, tusThreshold: 1, tusChunkSize: 100_000))
            do {
                let database = try ToukanDatabase(directory: directory)
                try database.add(recording)
                try database.beginUpload(id: recording.id, at: Date())
            }
            // Its upload, created on the server with one chunk sent before the connection died.
            let location = try await Self.createAndSendFirstChunk(port: port, recording: recording, bytes: bytes)
            let database = try ToukanDatabase(directory: directory)
            try database.recordProgress(id: recording.id, offset: 100_000, location: location)

            let loop = UploadLoop(
                database: database, dataDirectory: directory, uploader: uploader, network: NetworkSwitch(online: true),
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            try await Self.running(loop) {
                try await eventually("the resumed upload") {
                    try Self.status(database, recording.id) == .uploaded
                }
            }
            let patches = server.received.filter { $0.method == "PATCH" }.compactMap(\.uploadOffset)
            #expect(patches == [0, 100_000, 200_000], "resumed at 100,000, not from the start")
            #expect(server.tus.uploads[location]?.bytes == bytes && server.tus.memoriesMade == 1)
            try await uploader.shutdown()
        }
    }

    /// tus creation and the first 100,000-byte PATCH: an attempt through a proxy that cuts the second chunk.
    /// - Returns: The upload's Location.
    static func createAndSendFirstChunk(port: Int, recording: Recording, bytes: [UInt8]) async throws -> String {
        let proxy = FaultyProxy(target: port)
        // Creation (~500 bytes of request) and the first chunk pass; the second chunk is cut.
        proxy.inject(.cutRequest(afterBytes: 150_000))
        return try await proxy.run { proxyPort in
            let uploader = ToukanUploader(
                configuration: .init(
                    server: URL(string: "http://127.0.0.1:\(proxyPort)")!, tusThreshold: 1, tusChunkSize: 100_000))
            let locations = Mutex<[String]>([])
            let directory = try RecordingFiles.dataDirectory()
            let file = directory.appendingPathComponent("part.m4a")
            try Data(bytes).write(to: file)
            _ = await uploader.upload(recording, file: file) { event in
                if case .stored(let offset, let location?) = event, offset == 100_000 {
                    locations.withLock { $0.append(location) }
                }
            }
            try await uploader.shutdown()
            return try #require(locations.withLock { $0.first })
        }
    }
}
