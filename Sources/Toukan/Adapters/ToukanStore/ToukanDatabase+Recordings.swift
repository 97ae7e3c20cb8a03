public import Foundation
import GRDB
public import ToukanCore

extension ToukanDatabase {
    // MARK: Adding and reading

    /// Adds a freshly saved recording (pending upload).
    /// - Throws: ``ToukanStoreError`` `.duplicateRecording` when its id, file or idempotency key is in the ledger.
    public func add(_ recording: Recording) throws {
        try transaction { db in
            let clash = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM recording WHERE id = ? OR filePath = ? OR idempotencyKey = ?",
                arguments: [
                    recording.id.uuidString.lowercased(), recording.filePath, recording.idempotencyKey.rawValue,
                ])
            guard clash == 0 else {
                throw ToukanStoreError(
                    .duplicateRecording,
                    "\(recording.filePath) (\(recording.id)) is already in the ledger, or its key or file is")
            }
            try RecordingRow.insert(recording, db)
        }
    }

    /// The recording with this id, or nil.
    public func recording(id: UUID) throws -> Recording? {
        try writer.read { db in try RecordingRow.fetch(id, db) }
    }

    /// `toukan history`: newest recording first, with the live progress of the one uploading.
    /// - Parameter limit: At most this many (all when nil).
    public func history(limit: Int? = nil) throws -> [HistoryEntry] {
        try writer.read { db in
            let sql = "SELECT * FROM recording ORDER BY recordedAt DESC, id DESC" + (limit.map { " LIMIT \($0)" } ?? "")
            return try Row.fetchAll(db, sql: sql).map { row in
                HistoryEntry(recording: try RecordingRow.recording(row), progress: RecordingRow.progress(row))
            }
        }
    }

    /// The rows `UploadQueue.nextAction(rows:connectivity:now:)` decides over: pending and uploading, oldest first.
    public func queueRows() throws -> [Recording] {
        try writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM recording WHERE uploadStatus IN ('pending', 'uploading')
                    ORDER BY recordedAt, id
                    """
            ).map(RecordingRow.recording)
        }
    }

    // MARK: Status moves (ToukanCore's transitions, applied atomically)

    /// Applies `move` to the stored row and writes the result, in one transaction; when `move` throws, nothing
    /// changes.
    /// - Returns: The row as stored afterwards, and what `move` returned.
    /// - Throws: ``ToukanStoreError`` `.unknownRecording`, or what `move` throws (a `RecordingTransitionError`).
    @discardableResult
    public func update<T>(id: UUID, _ move: (inout Recording) throws -> T) throws -> (Recording, T) {
        try transaction { db in
            guard var recording = try RecordingRow.fetch(id, db) else {
                throw ToukanStoreError(.unknownRecording, "no recording \(id) in the ledger")
            }
            let result = try move(&recording)
            try RecordingRow.update(recording, db)
            return (recording, result)
        }
    }

    /// An attempt starts now (pending → uploading).
    @discardableResult
    public func beginUpload(id: UUID, at now: Date) throws -> Recording {
        try update(id: id) { try $0.beginUpload(at: now) }.0
    }

    /// The server holds `offset` bytes, at `location` (tus).
    @discardableResult
    public func recordProgress(id: UUID, offset: Int64, location: String?) throws -> Recording {
        try update(id: id) { try $0.recordProgress(offset: offset, location: location) }.0
    }

    /// The server confirmed the upload: uploaded (final) with its memory id; the file may go `retention` later.
    @discardableResult
    public func completeUpload(
        id: UUID, memoryId: String, at now: Date, retention: TimeInterval = CleanupPolicy.defaultRetention
    ) throws -> Recording {
        try update(id: id) { try $0.completeUpload(memoryId: memoryId, at: now, retention: retention) }.0
    }

    /// The attempt failed: pending again (a retry is scheduled by the backoff) or failed with the reason.
    @discardableResult
    public func failAttempt(
        id: UUID, _ failure: UploadFailure, at now: Date, policy: UploadRetryPolicy = UploadRetryPolicy()
    ) throws -> Recording {
        try update(id: id) { try $0.failAttempt(failure, at: now, policy: policy) }.0
    }

    /// `toukan retry ID`: pending and due now, with a fresh count of attempts (offset, location and key kept).
    @discardableResult
    public func retry(id: UUID) throws -> Recording {
        try update(id: id) { try $0.retry() }.0
    }

    /// `toukan retry --all`, the seed's pull-to-refresh: every pending or failed recording due now.
    /// - Returns: The ids that moved.
    @discardableResult
    public func retryAll() throws -> [UUID] {
        try moveAll(where: "uploadStatus IN ('pending', 'failed')") { try $0.retry() }
    }

    /// At daemon start: rows still `uploading` (the daemon died mid-upload) go back to pending, keeping their
    /// offset, Location and key so the upload resumes.
    /// - Returns: The ids recovered.
    @discardableResult
    public func recoverInterruptedUploads() throws -> [UUID] {
        try moveAll(where: "uploadStatus = 'uploading'") { try $0.recoverInterruptedUpload() }
    }

    /// Cleanup deleted the local file; the row stays in the history.
    @discardableResult
    public func markFileDeleted(id: UUID, at now: Date, policy: CleanupPolicy = CleanupPolicy()) throws -> Recording {
        try update(id: id) { try $0.markFileDeleted(at: now, policy: policy) }.0
    }

    /// The rows whose local files may be deleted at `now`, oldest first.
    public func filesToDelete(at now: Date, policy: CleanupPolicy = CleanupPolicy()) throws -> [Recording] {
        let rows = try writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM recording WHERE uploadStatus = 'uploaded' AND fileDeletedAt IS NULL"
            ).map(RecordingRow.recording)
        }
        return policy.filesToDelete(rows, at: now)
    }

    /// Live progress of the upload in progress (bytes sent of the request's total), for `toukan history`; ignored
    /// unless the row is uploading.
    public func setUploadProgress(id: UUID, _ progress: UploadProgress) throws {
        try writer.write { db in
            try db.execute(
                sql: """
                    UPDATE recording SET progressSent = ?, progressTotal = ?
                    WHERE id = ? AND uploadStatus = 'uploading'
                    """,
                arguments: [progress.sent, progress.total, id.uuidString.lowercased()])
        }
    }

    private func moveAll(where condition: String, _ move: (inout Recording) throws -> Void) throws -> [UUID] {
        try transaction { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM recording WHERE \(condition) ORDER BY recordedAt, id")
            return try rows.map { row in
                var recording = try RecordingRow.recording(row)
                try move(&recording)
                try RecordingRow.update(recording, db)
                return recording.id
            }
        }
    }
}
