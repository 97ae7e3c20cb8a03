import CanonicalJSON
import Foundation
import Logging
import ToukanCore
import ToukanRecorder

/// The recorder daemon's state: the seed's start/stop decisions (ToukanCore's ``RecorderSession``) performed on a
/// ``ToukanRecorder``, answering the control socket's requests.
///
/// A recording is written as `toukan_<time>.m4a.part` and renamed to `.m4a` when it stops, so a `.part` file is
/// always one whose daemon died: the next daemon finalizes it (``recoverPartialFiles()``) before anything else.
/// Saved recordings are handed to `onSaved` (the upload queue).
actor RecorderDaemon {
    typealias SavedHandler = @Sendable (SavedRecording) async -> Void

    private let data: ToukanDataDirectory
    private let configuration: RecorderConfiguration
    private let onSaved: SavedHandler
    private let log = Logger(label: "toukan daemon")
    private var session = RecorderSession()
    private var recorder: ToukanRecorder?
    private var partFile: URL?
    private var lastLevel: AudioLevel?
    /// The recording's size at the last look, so the size warning fires once, when it is crossed.
    private var lastSize: Int64 = 0

    init(data: ToukanDataDirectory, configuration: RecorderConfiguration, onSaved: @escaping SavedHandler) {
        self.data = data
        self.configuration = configuration
        self.onSaved = onSaved
    }

    /// Finalizes every `.part` file a killed daemon left into a normal `.m4a`, and hands it on. A file with no
    /// audio at all is kept aside as `.part.unrecoverable`, never deleted.
    func recoverPartialFiles() async -> [SavedRecording] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: data.recordings.path)) ?? []
        var recovered: [SavedRecording] = []
        for name in names.sorted() where name.hasSuffix(RecordingName.fileExtension + Self.partSuffix) {
            let part = data.recordings.appendingPathComponent(name)
            let final = part.deletingPathExtension()
            do {
                let duration = try await ToukanRecorder.recover(part, to: final)
                try FileManager.default.removeItem(at: part)
                let saved = SavedRecording(file: final, duration: duration.seconds, gaps: [], recovered: true)
                log.info("recovered \(final.lastPathComponent) (\(ElapsedTime.timer(duration.seconds))) after a crash")
                await onSaved(saved)
                recovered.append(saved)
            } catch {
                let aside = part.appendingPathExtension("unrecoverable")
                try? FileManager.default.moveItem(at: part, to: aside)
                log.error("cannot recover \(name): \(error); kept as \(aside.lastPathComponent)")
            }
        }
        return recovered
    }

    static let partSuffix = ".part"

    /// `toukan start`.
    func start(source: RecordingSource) async -> DaemonReply {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: data.recordings.path)) ?? []
        let existing = names.map { $0.hasSuffix(Self.partSuffix) ? String($0.dropLast(Self.partSuffix.count)) : $0 }
        switch session.start(now: Date(), freeBytes: data.freeBytes(), existingNames: existing) {
        case .alreadyRecording(let reply):
            return .done(reply)
        case .refused(let message):
            return .refused(message)
        case .start(let name, let reply):
            let part = data.recordings.appendingPathComponent(name.fileName + Self.partSuffix)
            do {
                let recorder = try ToukanRecorder(source: source, output: part, configuration: configuration)
                let events = recorder.events()
                let levels = recorder.levels()
                try await recorder.start()
                self.recorder = recorder
                partFile = part
                lastSize = 0
                Task { await self.follow(events) }
                Task {
                    for await level in levels { self.record(level) }
                }
                log.info("recording \(name.fileName) from \(source)")
                return .done(reply, file: data.recordings.appendingPathComponent(name.fileName).path)
            } catch {
                _ = session.stop(now: Date())
                return .refused("Recording did not start: \(error.message)")
            }
        }
    }

    /// `toukan stop`.
    func stop() async -> DaemonReply {
        switch session.stop(now: Date()) {
        case .notRecording(let reply):
            return .done(reply)
        case .stop(let name, _, let reply):
            guard let recorder, let part = partFile else { return .done(.notRecording) }
            self.recorder = nil
            partFile = nil
            lastLevel = nil
            let final = data.recordings.appendingPathComponent(name.fileName)
            do {
                let summary = try await recorder.stop()
                try FileManager.default.moveItem(at: part, to: final)
                let saved = SavedRecording(
                    file: final, duration: summary.duration.seconds, gaps: summary.gaps, recovered: false)
                await onSaved(saved)
                return .done(reply, file: final.path, durationSeconds: (saved.duration * 10).rounded() / 10)
            } catch {
                // The .part file stays: the next daemon recovers it, nothing is lost.
                log.error("stopping \(name.fileName) failed: \(error); the next start recovers it")
                return .refused("The recording could not be closed cleanly (\(error)); it will be recovered.")
            }
        }
    }

    /// `toukan status`: what the daemon is doing.
    func status() -> DaemonStatus {
        let pid = Int(ProcessInfo.processInfo.processIdentifier)
        guard let recorder, let name = session.current else { return DaemonStatus(pid: pid, state: .idle) }
        return DaemonStatus(
            pid: pid, state: recorder.state == .paused ? .paused : .recording,
            elapsedSeconds: (recorder.elapsed.seconds * 10).rounded() / 10,
            file: data.recordings.appendingPathComponent(name.fileName).path,
            level: lastLevel.map {
                DaemonStatus.Level(peakDb: $0.peakDecibels.rounded(), rmsDb: $0.rmsDecibels.rounded())
            },
            gaps: recorder.gaps.map(\.description))
    }

    /// A level reading (a few a second): kept for the status, and the moment to look at the file's size.
    private func record(_ level: AudioLevel) {
        lastLevel = level
        warnAboutSize()
    }

    /// Logs what happens to the recording; a failure (disk full) ends it and saves what was written.
    private func follow(_ events: AsyncStream<RecorderEvent>) async {
        for await event in events {
            switch event {
            case .paused(let at, let reason):
                log.warning("input lost at \(ElapsedTime.position(at.seconds)): \(reason); retrying")
            case .resumed(let gap):
                log.info("input back: \(gap)")
            case .failed(let error):
                log.error("recording failed: \(error.message)")
                _ = await stop()
            case .started, .finished:
                break
            }
        }
    }

    /// Warns once when the recording passes the warning size (ToukanCore's StoragePolicy).
    private func warnAboutSize() {
        guard let partFile,
            let size = (try? FileManager.default.attributesOfItem(atPath: partFile.path)[.size] as? NSNumber)?
                .int64Value
        else { return }
        defer { lastSize = size }
        if let warning = session.storage.sizeWarning(previousBytes: lastSize, currentBytes: size) {
            log.warning("\(warning)")
        }
    }

}

/// A recording that is finished on disk and must now be uploaded.
struct SavedRecording: Sendable, Hashable {
    var file: URL
    /// Seconds of audio.
    var duration: Double
    var gaps: [Gap]
    /// Finalized after a crash rather than stopped.
    var recovered: Bool
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
