import CanonicalJSON
import ControlSocket
import Foundation
import Logging
import ProgramLifecycle
import ServiceLifecycle
import ToukanCore
import ToukanRecorder
import ToukanStore

/// Ends at a `quit` request on the control socket, which stops the whole daemon as a signal would.
struct QuitRequests: Service {
    let quit: AsyncStream<Void>

    func run() async {
        let quit = quit
        await cancelWhenGracefulShutdown {
            for await _ in quit { break }
        }
    }
}

/// `toukan daemon`: the background process `toukan start` launches on first use (as Siri launches the app). It
/// serves the control socket in the data directory until SIGTERM or SIGINT, or a `quit` request; a recording still
/// running then is stopped and saved first.
public struct DaemonRun: Sendable {
    public let data: ToukanDataDirectory
    var configuration = RecorderConfiguration.default

    public init(data: ToukanDataDirectory) {
        self.data = data
    }

    /// Runs the daemon. Returns when it is told to stop.
    /// - Throws: ``ToukanFailure`` when the data directory or the socket cannot be used (another daemon serves it).
    public func run() async throws {
        do {
            try data.create()
        } catch {
            throw ToukanFailure("cannot create \(data.url.path): \(error)")
        }
        let log = Logger(label: "toukan daemon")
        let uploads: Uploads
        do {
            uploads = try Uploads(data: data)
        } catch {
            throw ToukanFailure("cannot open the ledger in \(data.url.path): \(error)")
        }
        let daemon = RecorderDaemon(data: data, configuration: configuration) { saved in
            log.info("saved \(saved.file.lastPathComponent) (\(ElapsedTime.timer(saved.duration)))")
            do {
                try await uploads.add(saved, randomBytes: Self.randomKeyBytes())
            } catch {
                // The file is on disk: the next daemon adopts it into the ledger.
                log.error("\(saved.file.lastPathComponent) is saved but not yet queued: \(error)")
            }
        }
        // What a daemon that died left: partial recordings, saved recordings it had not queued, uploads cut off.
        var recovered = await daemon.recoverPartialFiles()
        recovered += (try? await uploads.adopt(data.savedFiles())) ?? []
        do {
            let interrupted = try uploads.database.recoverInterruptedUploads()
            if !interrupted.isEmpty {
                log.info("\(interrupted.count) upload(s) cut off by a crash go back in the queue")
            }
        } catch {
            log.error("cannot put uploads cut off by a crash back in the queue: \(error)")
        }
        await uploads.start()
        let startedWith = recovered
        let (quit, quitting) = AsyncStream.makeStream(of: Void.self)
        let server: ControlSocketServer
        do {
            server = try await ControlSocketServer.start(path: data.socket.path) { request in
                Self.answer(request, daemon: daemon, uploads: uploads, recovered: startedWith, quit: quitting)
            }
        } catch let error as ControlSocketError where error.code == .alreadyRunning {
            throw ToukanFailure("a Toukan daemon is already running for \(data.url.path)")
        }
        log.info("ready, pid \(ProcessInfo.processInfo.processIdentifier)")
        // Started in this order, stopped in the reverse one on SIGINT, SIGTERM or a `quit` request: the recording
        // saved (and queued) first, then the uploads stopped, and the control socket closed last.
        let parts: [any Service] = [
            // the upload loop (a cut upload resumes at the next start); the recorder (a recording still running
            // is saved and queued first)
            server, ProgramLifecycle.AtShutdown("uploads") { await uploads.stop() },
            ProgramLifecycle.AtShutdown("recorder") { _ = await daemon.stop() }, QuitRequests(quit: quit),
        ]
        try await ProgramLifecycle.run(parts.map { ProgramLifecycle.Part($0) }, logger: log)
        log.info("stopped")
    }

    /// One request's answer lines. `recovered`: what this daemon recovered when it started (the status says it).
    static func answer(
        _ request: JSONValue, daemon: RecorderDaemon, uploads: Uploads, recovered: [SavedRecording],
        quit: AsyncStream<Void>.Continuation
    ) -> AsyncStream<JSONValue> {
        AsyncStream(JSONValue.self) { continuation in
            let task = Task {
                let command: DaemonRequest
                do throws(DaemonRequest.Invalid) {
                    command = try DaemonRequest(json: request)
                } catch {
                    continuation.yield(DaemonReply.refused(error.message).json)
                    continuation.finish()
                    return
                }
                switch command {
                case .start(let source, let server):
                    if let server {
                        guard let url = URL(string: server), ["http", "https"].contains(url.scheme ?? "") else {
                            continuation.yield(DaemonReply.refused("--server must be an http(s) URL").json)
                            break
                        }
                        do {
                            try await uploads.use(server: url)
                        } catch {
                            continuation.yield(DaemonReply.refused("cannot remember the server: \(error)").json)
                            break
                        }
                    }
                    do throws(RecorderError) {
                        continuation.yield(await daemon.start(source: try RecordingSource(parsing: source)).json)
                    } catch {
                        continuation.yield(DaemonReply.refused(error.message).json)
                    }
                case .stop:
                    continuation.yield(await daemon.stop().json)
                case .status:
                    var status = await daemon.status()
                    status.recoveredAtStart = recovered.map {
                        DaemonStatus.Recovered(file: $0.file.lastPathComponent, durationSeconds: $0.duration)
                    }
                    continuation.yield(status.json)
                case .watch:
                    while !Task.isCancelled {
                        continuation.yield(await daemon.status().json)
                        try? await Task.sleep(for: .milliseconds(250))
                    }
                case .wake:
                    await uploads.wake()
                    continuation.yield(DaemonReply.done().json)
                case .quit:
                    continuation.yield(DaemonReply.done().json)
                    quit.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension DaemonRun {
    /// 16 bytes from the system's CSPRNG, for an idempotency key.
    static func randomKeyBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<IdempotencyKey.randomByteCount).map { _ in generator.next() }
    }
}

/// A failure `toukan` reports as one line on stderr (exit status 1).
public struct ToukanFailure: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
