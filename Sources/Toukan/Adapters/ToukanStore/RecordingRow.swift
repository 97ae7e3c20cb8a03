import Foundation
import GRDB
import ToukanCore

/// A `recording` row to and from a `Recording`: every field, dates as seconds since 1970, gaps as JSON.
enum RecordingRow {
    static let columns = [
        "id", "filePath", "recordedAt", "duration", "gaps", "idempotencyKey", "uploadStatus", "memoryId",
        "retryCount", "lastAttempt", "uploadOffset", "uploadLocation", "retryNotBefore", "lastError", "uploadedAt",
        "purgeAfter", "fileDeletedAt", "offlineAttempts", "offlineSince", "recoveredAfterCrash",
    ]

    /// The values of `columns`, in order.
    static func values(_ recording: Recording) throws -> [(any DatabaseValueConvertible)?] {
        let gaps = String(decoding: try JSONEncoder().encode(recording.gaps), as: UTF8.self)
        return [
            recording.id.uuidString.lowercased(), recording.filePath, recording.recordedAt.timeIntervalSince1970,
            recording.duration, gaps, recording.idempotencyKey.rawValue, recording.uploadStatus.rawValue,
            recording.memoryId, recording.retryCount, seconds(recording.lastAttempt), recording.uploadOffset,
            recording.uploadLocation, seconds(recording.retryNotBefore), recording.lastError,
            seconds(recording.uploadedAt), seconds(recording.purgeAfter), seconds(recording.fileDeletedAt),
            recording.offlineAttempts, seconds(recording.offlineSince), recording.recoveredAfterCrash,
        ]
    }

    /// Inserts a new row.
    static func insert(_ recording: Recording, _ db: Database) throws {
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try db.execute(
            sql: "INSERT INTO recording (\(columns.joined(separator: ", "))) VALUES (\(marks))",
            arguments: StatementArguments(try values(recording)))
    }

    /// Writes every field of an existing row; the live progress is kept only while it uploads.
    static func update(_ recording: Recording, _ db: Database) throws {
        let assignments = columns.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")
        let id = recording.id.uuidString.lowercased()
        try db.execute(
            sql: "UPDATE recording SET \(assignments) WHERE id = ?",
            arguments: StatementArguments(Array(try values(recording).dropFirst()) + [id]))
        if recording.uploadStatus != .uploading {
            try db.execute(
                sql: "UPDATE recording SET progressSent = NULL, progressTotal = NULL WHERE id = ?", arguments: [id])
        }
    }

    static func fetch(_ id: UUID, _ db: Database) throws -> Recording? {
        try Row.fetchOne(db, sql: "SELECT * FROM recording WHERE id = ?", arguments: [id.uuidString.lowercased()])
            .map(recording)
    }

    static func recording(_ row: Row) throws -> Recording {
        let idText: String = row["id"]
        let keyText: String = row["idempotencyKey"]
        let statusText: String = row["uploadStatus"]
        let gapsText: String = row["gaps"]
        guard let id = UUID(uuidString: idText), let key = IdempotencyKey(rawValue: keyText),
            let status = UploadStatus(rawValue: statusText),
            let gaps = try? JSONDecoder().decode([Gap].self, from: Data(gapsText.utf8))
        else {
            throw ToukanStoreError(.corruptRow, "the ledger row \(idText) cannot be read (id, key, status or gaps)")
        }
        return Recording(
            restoring: id, filePath: row["filePath"], recordedAt: Date(timeIntervalSince1970: row["recordedAt"]),
            duration: row["duration"], gaps: gaps, idempotencyKey: key, uploadStatus: status,
            memoryId: row["memoryId"], retryCount: row["retryCount"], lastAttempt: date(row["lastAttempt"]),
            uploadOffset: row["uploadOffset"], uploadLocation: row["uploadLocation"],
            retryNotBefore: date(row["retryNotBefore"]), lastError: row["lastError"],
            uploadedAt: date(row["uploadedAt"]), purgeAfter: date(row["purgeAfter"]),
            fileDeletedAt: date(row["fileDeletedAt"]), offlineAttempts: row["offlineAttempts"],
            offlineSince: date(row["offlineSince"]), recoveredAfterCrash: row["recoveredAfterCrash"])
    }

    static func progress(_ row: Row) -> UploadProgress? {
        guard let sent: Int64 = row["progressSent"], let total: Int64 = row["progressTotal"] else { return nil }
        return UploadProgress(sent: sent, total: total)
    }

    private static func seconds(_ date: Date?) -> Double? { date?.timeIntervalSince1970 }
    private static func date(_ seconds: Double?) -> Date? { seconds.map(Date.init(timeIntervalSince1970:)) }
}
