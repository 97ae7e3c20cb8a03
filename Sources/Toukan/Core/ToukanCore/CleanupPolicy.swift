public import Foundation

/// Which local files may be deleted: a file is kept `retention` (7 days) after its upload was confirmed, as a safety
/// net, and a file that was never confirmed uploaded is never deleted.
public struct CleanupPolicy: Sendable, Hashable {
    /// The seed's safety net: seven days.
    public static let defaultRetention: TimeInterval = 7 * 24 * 3600

    public var retention: TimeInterval

    public init(retention: TimeInterval = CleanupPolicy.defaultRetention) {
        self.retention = retention
    }

    /// Whether `row`'s local file may be deleted at `now`: uploaded with a memory id, confirmed at least
    /// `retention` ago (and past its `purgeAfter`), not deleted already.
    public func mayDelete(_ row: Recording, at now: Date) -> Bool {
        guard row.uploadStatus == .uploaded, row.memoryId != nil, row.fileDeletedAt == nil,
            let uploadedAt = row.uploadedAt
        else { return false }
        return now >= uploadedAt + retention && now >= (row.purgeAfter ?? uploadedAt + retention)
    }

    /// The rows whose local files may be deleted at `now`, oldest recording first.
    public func filesToDelete(_ rows: [Recording], at now: Date) -> [Recording] {
        rows.filter { mayDelete($0, at: now) }.sorted { $0.recordedAt < $1.recordedAt }
    }
}

extension Recording {
    /// Cleanup deleted the local file; the row stays in the history.
    /// - Throws: `.notPurgeable` unless `policy` allows deleting it at `now`.
    public mutating func markFileDeleted(at now: Date, policy: CleanupPolicy = CleanupPolicy())
        throws(RecordingTransitionError)
    {
        guard policy.mayDelete(self, at: now) else {
            let reason =
                uploadStatus != .uploaded
                ? "it is \(uploadStatus.rawValue), not uploaded"
                : "it is kept until \(purgeAfter.map { "\($0)" } ?? "?")"
            throw RecordingTransitionError(.notPurgeable, "\(filePath) may not be deleted: \(reason)")
        }
        fileDeletedAt = now
    }
}
