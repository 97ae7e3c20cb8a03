import CanonicalJSON
import ControlSocket
public import Foundation
import SystemdUnit
import ToukanCore
import ToukanStore

/// `toukan start|stop|status`: talk to the daemon of a data directory, starting it on first use.
public struct ToukanCommands: Sendable {
    public let data: ToukanDataDirectory
    /// One JSON object per answer instead of text.
    public var json: Bool

    public init(data: ToukanDataDirectory, json: Bool) {
        self.data = data
        self.json = json
    }

    /// `toukan start`: starts the daemon if needed, then recording. Returns the lines to print.
    public func start(source: String, server: String? = nil) async throws -> String {
        let repair = try await repair()
        try await ensureDaemon()
        let answer = try await reply(.start(source: source, server: server))
        if json { return try render(answer, adding: ["recovered": repair.recoveredJSON]) }
        return ([try render(answer)] + [repair.recoveredText].compactMap { $0 }).joined(separator: "\n")
    }

    /// `toukan stop`: saves the recording. When the recorder had died, what it left is recovered and saved: the
    /// person asked for their recording to be saved, and it is.
    public func stop() async throws -> String {
        let repair = try await repair()
        var answer: DaemonReply
        do {
            answer = try await reply(.stop)
        } catch let error as ControlSocketError where error.code == .notRunning {
            answer = .done(.notRecording)
        }
        if answer.reply == .notRecording, !repair.recovered.isEmpty {
            answer = .done(.recordingSaved)
        }
        let noServer = answer.reply == .recordingSaved && data.uploadServer == nil
        if json {
            var extra: [String: JSONValue] = ["recovered": repair.recoveredJSON]
            if noServer { extra["upload"] = .string(UploadSummary.setServer) }
            return try render(answer, adding: extra)
        }
        var lines = [try render(answer)]
        if let recovered = repair.recoveredText { lines.append(recovered) }
        if noServer { lines.append("It waits here: " + UploadSummary.setServer + ".") }
        return lines.joined(separator: "\n")
    }

    /// `toukan status`: the daemon's state (idle when none runs), what was recovered on the way in, and where
    /// uploads stand.
    public func status() async throws -> String {
        let repair = try await repair()
        var status: DaemonStatus
        do {
            status = try DaemonStatus(json: try await ask(.status))
        } catch let error as ControlSocketError where error.code == .notRunning {
            status = .noDaemon
        }
        let summary = UploadSummary(entries: try ledger()?.history() ?? [], server: data.uploadServer, now: Date())
        if json {
            guard case .object(var members) = status.json else { return status.json.canonicalString }
            members["recovered"] = repair.recoveredJSON
            members["uploads"] = summary.json
            members.removeValue(forKey: "recoveredAtStart")
            return JSONValue.object(members).canonicalString
        }
        return ([statusText(status), repair.recoveredText, summary.line].compactMap { $0 }).joined(separator: "\n")
    }

    /// `toukan status --watch`: the MM:SS timer and a level meter, refreshed until the caller stops iterating.
    public func watch() -> AsyncThrowingStream<String, any Error> {
        let stream = ControlSocketClient.request(path: data.socket.path, DaemonRequest.watch.json)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await line in stream { continuation.yield(statusText(try DaemonStatus(json: line))) }
                    continuation.finish()
                } catch let error as ControlSocketError where error.code == .notRunning {
                    continuation.yield(statusText(.noDaemon))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func ask(_ request: DaemonRequest) async throws -> JSONValue {
        try await ControlSocketClient.ask(path: data.socket.path, request.json)
    }

    /// Asks the daemon to do something and reads its answer.
    private func reply(_ request: DaemonRequest) async throws -> DaemonReply {
        try DaemonReply(json: try await ask(request))
    }

    /// An answer as the user reads it: the reply, or the error (thrown, so the exit status says it failed). With
    /// `--json`, `adding`'s members join the answer's.
    private func render(_ answer: DaemonReply, adding extra: [String: JSONValue] = [:]) throws -> String {
        if !answer.ok {
            if json { throw ToukanFailure(answer.json.canonicalString) }
            throw ToukanFailure(answer.error ?? "the daemon refused")
        }
        guard json else { return answer.reply?.rawValue ?? answer.json.canonicalString }
        guard case .object(let members) = answer.json else { return answer.json.canonicalString }
        return JSONValue.object(members.merging(extra) { old, _ in old }).canonicalString
    }

    /// `● REC 01:23  ▮▮▮▮▮▯▯▯▯▯ −23 dB  toukan_….m4a`, or `Toukan isn't recording right now`.
    func statusText(_ status: DaemonStatus) -> String {
        if json { return status.json.canonicalString }
        guard status.state != .idle else { return ToukanReply.notRecording.rawValue }
        let elapsed = status.elapsedSeconds ?? 0
        let file = status.file.map { URL(fileURLWithPath: $0).lastPathComponent } ?? ""
        var line = (status.state == .paused ? "‖ PAUSED " : "● REC ") + ElapsedTime.timer(elapsed)
        if let peak = status.level?.peakDb {
            // −60 dBFS and below is an empty meter, 0 dBFS a full one.
            let filled = Int((min(max(peak, -60), 0) + 60) / 6)
            line += "  " + String(repeating: "▮", count: filled) + String(repeating: "▯", count: 10 - filled)
            line += String(format: " %.0f dB", peak)
        }
        if let gaps = status.gaps, !gaps.isEmpty {
            line += "  (\(gaps.joined(separator: ", ")))"
        }
        return line + "  " + file
    }

    /// Starts `toukan daemon` for this data directory unless one answers, and waits until it does (≤ 15 s).
    func ensureDaemon() async throws {
        if (try? await ask(.status)) != nil { return }
        try data.create()
        let program = UserServiceUnit.currentExecutable()
        let process = Process()
        // setsid: the daemon gets a session of its own, so the terminal's Ctrl-C and hang-up do not reach it.
        let setsid = ["/usr/bin/setsid", "/bin/setsid"].first { FileManager.default.isExecutableFile(atPath: $0) }
        process.executableURL = URL(fileURLWithPath: setsid ?? program)
        process.arguments = (setsid == nil ? [] : [program]) + ["daemon", "--data-dir", data.url.path]
        FileManager.default.createFile(atPath: data.log.path, contents: nil, attributes: [.posixPermissions: 0o600])
        let log = try FileHandle(forWritingTo: data.log)
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw ToukanFailure("cannot start the Toukan daemon (\(program)): \(error)")
        }
        // It recovers what a dead daemon left before it answers (a long recording takes a few seconds): wait while
        // it lives, up to two minutes.
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if (try? await ask(.status)) != nil { return }
            // (setsid may fork and exit 0 at once; a failure status is the daemon's own.)
            if !process.isRunning, process.terminationStatus != 0 {
                throw ToukanFailure("the Toukan daemon stopped at start; see \(data.log.path)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ToukanFailure("the Toukan daemon did not answer within 2 minutes; see \(data.log.path)")
    }
}
