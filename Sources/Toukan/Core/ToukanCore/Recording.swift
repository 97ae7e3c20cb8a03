public import Foundation

/// One row of the recording ledger: the seed's fields (id, filePath, recordedAt, duration, uploadStatus, memoryId,
/// retryCount, lastAttempt) and what resumable, idempotent uploads and cleanup need.
///
/// The upload fields change only through the transitions in `Recording+Transitions.swift`, which refuse the moves
/// that would lose audio or upload twice; a store rebuilds a row with `init(restoring…)`.
public struct Recording: Sendable, Hashable, Identifiable {
    public let id: UUID
    /// Relative to the data directory, e.g. `recordings/toukan_2024-01-15T14-30-00.m4a`.
    public var filePath: String
    public var recordedAt: Date
    /// Seconds of audio actually recorded (gaps excluded).
    public var duration: TimeInterval
    /// Where the input was lost and came back.
    public var gaps: [Gap]
    /// Sent with every attempt, so the server recognises a repeat.
    public let idempotencyKey: IdempotencyKey

    public internal(set) var uploadStatus: UploadStatus
    /// The server's id for the upload, once confirmed.
    public internal(set) var memoryId: String?
    /// Failed attempts the server is to blame for (``UploadFailure/Disposition/counted`` or refused) since the
    /// recording was queued or last retried by hand; the fifth fails it.
    public internal(set) var retryCount: Int
    /// Attempts that found the server unreachable (``UploadFailure/Disposition/offline``) since the recording was
    /// queued or last retried by hand: they never fail it, but lengthen the wait before the next attempt.
    public internal(set) var offlineAttempts: Int
    /// Since when the server has been unreachable for this recording (the first of the attempts that found it so,
    /// since it last answered); nil when it answered the last attempt or none was made.
    public internal(set) var offlineSince: Date?
    /// Finalised after its recorder died (a `.part` file recovered), rather than stopped.
    public var recoveredAfterCrash: Bool
    /// When the last attempt started.
    public internal(set) var lastAttempt: Date?
    /// Bytes the server is known to hold (tus), so an interrupted upload resumes there.
    public internal(set) var uploadOffset: Int64
    /// The tus upload URL once created, so a resumed upload finds it.
    public internal(set) var uploadLocation: String?
    /// The server's Retry-After, as the earliest time of the next attempt.
    public internal(set) var retryNotBefore: Date?
    /// What the last failure was, in words (the server's message for a refused upload).
    public internal(set) var lastError: String?
    /// When the server confirmed the upload.
    public internal(set) var uploadedAt: Date?
    /// From when the local file may be deleted (a confirmed upload + the retention).
    public internal(set) var purgeAfter: Date?
    /// When cleanup deleted the local file (the row stays in the history).
    public internal(set) var fileDeletedAt: Date?

    /// A freshly saved recording, pending upload.
    public init(
        id: UUID, filePath: String, recordedAt: Date, duration: TimeInterval, idempotencyKey: IdempotencyKey,
        gaps: [Gap] = [], recoveredAfterCrash: Bool = false
    ) {
        self.init(
            restoring: id, filePath: filePath, recordedAt: recordedAt, duration: duration, gaps: gaps,
            idempotencyKey: idempotencyKey, uploadStatus: .pending, memoryId: nil, retryCount: 0, lastAttempt: nil,
            uploadOffset: 0, uploadLocation: nil, retryNotBefore: nil, lastError: nil, uploadedAt: nil,
            purgeAfter: nil, fileDeletedAt: nil, recoveredAfterCrash: recoveredAfterCrash)
    }

    /// A row as a store kept it.
    public init(
        restoring id: UUID, filePath: String, recordedAt: Date, duration: TimeInterval, gaps: [Gap],
        idempotencyKey: IdempotencyKey, uploadStatus: UploadStatus, memoryId: String?, retryCount: Int,
        lastAttempt: Date?, uploadOffset: Int64, uploadLocation: String?, retryNotBefore: Date?, lastError: String?,
        uploadedAt: Date?, purgeAfter: Date?, fileDeletedAt: Date?, offlineAttempts: Int = 0, offlineSince: Date? = nil,
        recoveredAfterCrash: Bool = false
    ) {
        self.id = id
        self.filePath = filePath
        self.recordedAt = recordedAt
        self.duration = duration
        self.gaps = gaps
        self.idempotencyKey = idempotencyKey
        self.uploadStatus = uploadStatus
        self.memoryId = memoryId
        self.retryCount = retryCount
        self.lastAttempt = lastAttempt
        self.uploadOffset = uploadOffset
        self.uploadLocation = uploadLocation
        self.retryNotBefore = retryNotBefore
        self.lastError = lastError
        self.uploadedAt = uploadedAt
        self.purgeAfter = purgeAfter
        self.fileDeletedAt = fileDeletedAt
        self.offlineAttempts = offlineAttempts
        self.offlineSince = offlineSince
        self.recoveredAfterCrash = recoveredAfterCrash
    }
}
