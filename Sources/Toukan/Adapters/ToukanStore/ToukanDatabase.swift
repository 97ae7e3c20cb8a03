public import Foundation
import GRDB
import SQLiteFiles
import ToukanCore

/// The Toukan ledger: one SQLite file, `toukan.sqlite`, in the data directory, one row per recording.
///
/// Every status move is an intent method (``beginUpload(id:at:)``, ``completeUpload(id:memoryId:at:retention:)``,
/// …) that reads the row, applies ToukanCore's transition and writes the result in one `BEGIN IMMEDIATE`
/// transaction: a refused transition throws its `RecordingTransitionError` and changes nothing, and two processes
/// (the daemon uploading, `toukan retry` in a terminal) never interleave a read and a write. The file is a WAL-mode
/// `DatabasePool`, so `toukan history` reads while the daemon writes.
public final class ToukanDatabase: Sendable {
    /// The file name inside the data directory.
    public static let fileName = "toukan.sqlite"

    let writer: any DatabaseWriter

    /// Opens or creates `toukan.sqlite` in `directory` (created 0600, an existing file set back to 0600; SQLite
    /// gives its `-wal` and `-shm` files the same mode) and migrates it.
    /// - Parameter directory: An existing directory (the data directory, mode 0700).
    /// - Throws: ``ToukanStoreError`` `.cannotOpen` naming the file and the reason.
    public convenience init(directory: URL) throws(ToukanStoreError) {
        let path = directory.appendingPathComponent(Self.fileName).path
        do {
            try self.init(writer: SQLiteFile.pool(path: path, configuration: Self.configuration()))
        } catch let error as SQLiteFileError {
            throw ToukanStoreError(.cannotOpen, "The ledger \(path) cannot be opened: \(error.reason)")
        } catch {
            throw ToukanStoreError(.cannotOpen, "The ledger \(path) cannot be opened: \(error)")
        }
    }

    /// An empty, migrated ledger in memory, for tests.
    public static func inMemory() throws -> ToukanDatabase {
        try ToukanDatabase(writer: DatabaseQueue(configuration: configuration()))
    }

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        try ToukanSchema.migrator.migrate(writer)
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "ToukanDatabase"
        // Another process may hold the write lock for a moment (`toukan retry`): wait for it rather than fail.
        configuration.busyMode = .timeout(10)
        return configuration
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken first, so what `body` reads cannot
    /// go stale before it writes. A throw rolls everything back.
    func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    /// A number that changes whenever another connection (another process, or another `ToukanDatabase` on the
    /// same file) commits; this instance's own writes leave it unchanged. SQLite's `PRAGMA data_version`.
    public func dataVersion() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }
}
