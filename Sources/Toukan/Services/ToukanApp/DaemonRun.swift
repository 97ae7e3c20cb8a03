import CanonicalJSON
import ControlSocket
import Foundation
import Logging
import ToukanCore
import ToukanRecorder
import UnixSignals

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
        let daemon = RecorderDaemon(data: data, configuration: configuration) { saved in
            log.info("saved \(saved.file.lastPathComponent) (\(ElapsedTime.timer(saved.duration)))")
        }
        _ = await daemon.recoverPartialFiles()
        let (quit, quitting) = AsyncStream.makeStream(of: Void.self)
        let server: ControlSocketServer
        do {
            server = try await ControlSocketServer.start(path: data.socket.path) { request in
                Self.answer(request, daemon: daemon, quit: quitting)
            }
        } catch let error as ControlSocketError where error.code == .alreadyRunning {
            throw ToukanFailure("a Toukan daemon is already running for \(data.url.path)")
        }
        log.info("ready, pid \(ProcessInfo.processInfo.processIdentifier)")
        let signals = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                quitting.yield()
                return
            }
        }
        for await _ in quit { break }
        signals.cancel()
        _ = await daemon.stop()
        await server.close()
        log.info("stopped")
    }

    /// One request's answer lines.
    static func answer(
        _ request: JSONValue, daemon: RecorderDaemon, quit: AsyncStream<Void>.Continuation
    ) -> AsyncStream<JSONValue> {
        AsyncStream(JSONValue.self) { continuation in
            let task = Task {
                switch request["command"]?.stringValue {
                case "start":
                    let text = request["source"]?.stringValue ?? "auto"
                    do throws(RecorderError) {
                        let source = try RecordingSource(parsing: text)
                        continuation.yield(await daemon.start(source: source))
                    } catch {
                        continuation.yield(["ok": false, "error": .string(error.message)])
                    }
                case "stop":
                    continuation.yield(await daemon.stop())
                case "status":
                    continuation.yield(await daemon.status())
                case "watch":
                    while !Task.isCancelled {
                        continuation.yield(await daemon.status())
                        try? await Task.sleep(for: .milliseconds(250))
                    }
                case "quit":
                    continuation.yield(["ok": true])
                    quit.yield()
                default:
                    continuation.yield(["ok": false, "error": "unknown command; expected start, stop, status or watch"])
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
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
