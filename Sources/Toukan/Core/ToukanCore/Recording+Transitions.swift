public import Foundation

/// The upload status machine of a ledger row:
///
/// ```
/// pending ──beginUpload──▶ uploading ──completeUpload──▶ uploaded (final)
///    ▲  ▲                   │  │
///    │  └──failAttempt──────┘  └──failAttempt (refused, or the 5th counted failure)──▶ failed
///    │     (offline: always;                                                            │
///    │      counted: before the 5th)                                                    │
///    └───────────────────────────── retry (manual) ─────────────────────────────────────┘
/// uploading ──recoverInterruptedUpload (daemon restarted)──▶ pending, keeping offset, location and key
/// ```
extension Recording {
    /// An attempt starts now.
    /// - Throws: `.alreadyUploaded`, `.uploadInProgress`, or `.failed` (retry it first).
    public mutating func beginUpload(at now: Date) throws(RecordingTransitionError) {
        switch uploadStatus {
        case .pending:
            uploadStatus = .uploading
            lastAttempt = now
            retryNotBefore = nil
        case .uploading:
            throw RecordingTransitionError(.uploadInProgress, "\(filePath) is already being uploaded")
        case .uploaded:
            throw alreadyUploaded
        case .failed:
            throw RecordingTransitionError(.failed, "\(filePath) failed to upload; retry it to upload it again")
        }
    }

    /// The server holds `offset` bytes (tus), at `location`.
    /// - Throws: `.notUploading` outside an upload, `.invalidArgument` for a negative offset.
    public mutating func recordProgress(offset: Int64, location: String?) throws(RecordingTransitionError) {
        guard uploadStatus == .uploading else { throw notUploading("record upload progress") }
        guard offset >= 0 else {
            throw RecordingTransitionError(.invalidArgument, "upload offset \(offset) is negative")
        }
        uploadOffset = offset
        if let location { uploadLocation = location }
    }

    /// The server confirmed the upload with `memoryId`: final. The local file may go `retention` later.
    /// - Throws: `.alreadyUploaded` (it is never uploaded twice), `.notUploading`, `.invalidArgument` for an
    ///   empty memory id.
    public mutating func completeUpload(
        memoryId: String, at now: Date, retention: TimeInterval = CleanupPolicy.defaultRetention
    ) throws(RecordingTransitionError) {
        guard uploadStatus != .uploaded else { throw alreadyUploaded }
        guard uploadStatus == .uploading else { throw notUploading("complete an upload") }
        guard !memoryId.isEmpty else {
            throw RecordingTransitionError(.invalidArgument, "an upload is confirmed by a memory id; it was empty")
        }
        uploadStatus = .uploaded
        self.memoryId = memoryId
        uploadedAt = now
        purgeAfter = now.addingTimeInterval(retention)
        lastError = nil
        retryNotBefore = nil
        offlineSince = nil
    }

    /// The attempt in progress failed (`now` is when it ended). An unreachable server leaves the recording pending
    /// however long it lasts (the seed: a backend that is down is the same as offline), remembering since when; a
    /// failure the server is to blame for goes back to pending until the policy's last attempt; a refusal of the
    /// content fails at once, keeping the server's message.
    /// - Returns: The status it moved to (`.pending` or `.failed`).
    /// - Throws: `.notUploading` outside an upload.
    @discardableResult
    public mutating func failAttempt(
        _ failure: UploadFailure, at now: Date, policy: UploadRetryPolicy = UploadRetryPolicy()
    ) throws(RecordingTransitionError) -> UploadStatus {
        guard uploadStatus == .uploading else { throw notUploading("fail an upload attempt") }
        lastError = failure.description
        retryNotBefore = nil
        switch failure.disposition {
        case .offline:
            offlineAttempts += 1
            if offlineSince == nil { offlineSince = lastAttempt ?? now }
            uploadStatus = .pending
        case .counted:
            retryCount += 1
            offlineSince = nil
            uploadStatus = retryCount < policy.maximumAttempts ? .pending : .failed
        case .refused:
            retryCount += 1
            offlineSince = nil
            uploadStatus = .failed
        }
        if uploadStatus == .pending, case .server(_, _, let retryAfter?) = failure {
            retryNotBefore = now.addingTimeInterval(retryAfter)
        }
        return uploadStatus
    }

    /// Failed attempts since the recording was queued or last retried by hand, whatever their cause: what the wait
    /// before the next one grows with.
    public var failedAttempts: Int { retryCount + offlineAttempts }

    /// A manual retry (`toukan retry`, the seed's pull-to-refresh) of a failed or pending recording: pending, due
    /// now, with a fresh count of attempts. Where the upload got to (offset, location, key) is kept.
    /// - Throws: `.alreadyUploaded`, `.uploadInProgress`.
    public mutating func retry() throws(RecordingTransitionError) {
        switch uploadStatus {
        case .pending, .failed:
            uploadStatus = .pending
            retryCount = 0
            offlineAttempts = 0
            offlineSince = nil
            retryNotBefore = nil
            lastError = nil
        case .uploading:
            throw RecordingTransitionError(.uploadInProgress, "\(filePath) is being uploaded right now")
        case .uploaded:
            throw alreadyUploaded
        }
    }

    /// On daemon start, a row still `uploading` means the daemon died mid-upload: back to pending, keeping its
    /// offset, location and key so the upload resumes. Not counted as a failed attempt.
    /// - Throws: `.notUploading` for any other status.
    public mutating func recoverInterruptedUpload() throws(RecordingTransitionError) {
        guard uploadStatus == .uploading else { throw notUploading("recover an interrupted upload") }
        uploadStatus = .pending
    }

    private var alreadyUploaded: RecordingTransitionError {
        RecordingTransitionError(
            .alreadyUploaded, "\(filePath) is already uploaded (memory \(memoryId ?? "?")); it is never uploaded again")
    }

    private func notUploading(_ move: String) -> RecordingTransitionError {
        RecordingTransitionError(.notUploading, "cannot \(move) of \(filePath): it is \(uploadStatus.rawValue)")
    }
}
