public import ToukanCore

/// How far the upload in progress has got: bytes handed to the connection, of the request's total. Written by the
/// uploading daemon, read by `toukan history` in another process.
public struct UploadProgress: Sendable, Hashable {
    public var sent: Int64
    public var total: Int64

    public init(sent: Int64, total: Int64) {
        self.sent = sent
        self.total = total
    }

    /// 0…1 (1 for an empty total).
    public var fraction: Double { total > 0 ? min(1, Double(max(0, sent)) / Double(total)) : 1 }
}

/// One line of `toukan history`: the ledger row and, while it uploads, its live progress.
public struct HistoryEntry: Sendable, Hashable {
    public var recording: Recording
    /// Only while `recording.uploadStatus == .uploading`.
    public var progress: UploadProgress?

    public init(recording: Recording, progress: UploadProgress? = nil) {
        self.recording = recording
        self.progress = progress
    }
}
