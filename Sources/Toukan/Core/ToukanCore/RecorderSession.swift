public import Foundation

/// The recorder's start/stop decisions, as a pure machine: the daemon performs what it returns (open the pipeline,
/// finalize the file, queue the upload) and speaks the reply.
public struct RecorderSession: Sendable, Hashable {
    private enum State: Sendable, Hashable {
        case idle
        case recording(RecordingName, startedAt: Date)
    }

    /// The answer to `start`.
    public enum StartOutcome: Sendable, Hashable {
        /// Record into this file now; say the reply.
        case start(RecordingName, reply: ToukanReply)
        /// Already recording (a no-op); say the reply.
        case alreadyRecording(ToukanReply)
        /// Not started: too little free space; the message says how much there is.
        case refused(String)
    }

    /// The answer to `stop`.
    public enum StopOutcome: Sendable, Hashable {
        /// Finalize this file (recorded for `elapsed` seconds) and queue it; say the reply.
        case stop(RecordingName, elapsed: TimeInterval, reply: ToukanReply)
        /// Nothing was recording (a no-op); say the reply.
        case notRecording(ToukanReply)
    }

    private var state: State = .idle
    public var storage: StoragePolicy

    public init(storage: StoragePolicy = StoragePolicy()) {
        self.storage = storage
    }

    /// The file being recorded, if any.
    public var current: RecordingName? {
        if case .recording(let name, _) = state { return name }
        return nil
    }

    /// Seconds since the current recording started, as the timer shows them (nil when idle).
    public func elapsed(at now: Date) -> TimeInterval? {
        guard case .recording(_, let startedAt) = state else { return nil }
        return max(0, now.timeIntervalSince(startedAt))
    }

    /// `toukan start`.
    /// - Parameters:
    ///   - now: The time, which names the file.
    ///   - freeBytes: Free space where recordings are kept.
    ///   - existingNames: File names already there (a name is never reused).
    public mutating func start(now: Date, freeBytes: Int64, existingNames: some Sequence<String>) -> StartOutcome {
        if current != nil { return .alreadyRecording(.alreadyRecording) }
        if let refusal = storage.refusalToStart(freeBytes: freeBytes) { return .refused(refusal) }
        let name = RecordingName.next(startedAt: now, existing: existingNames)
        state = .recording(name, startedAt: now)
        return .start(name, reply: .recordingStarted)
    }

    /// `toukan stop`.
    public mutating func stop(now: Date) -> StopOutcome {
        guard let name = current else { return .notRecording(.notRecording) }
        let elapsed = elapsed(at: now) ?? 0
        state = .idle
        return .stop(name, elapsed: elapsed, reply: .recordingSaved)
    }
}
