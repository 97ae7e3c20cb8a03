public import Foundation
import GRDB
import SQLiteFiles

/// The CribCall database: one SQLite file per product holding pairings, settings and recent noise events.
///
/// Every operation is an intent method (``trustListener(_:at:)``, ``revokeListener(id:)``, …) that runs in its own
/// transaction. A file-backed database uses a WAL-mode `DatabasePool`, so another process (for example
/// `cribcall listeners revoke` in a second terminal) can write while the monitor runs; the monitor notices with
/// ``dataVersion()``.
public final class CribCallDatabase: Sendable {
    /// The file name inside the data directory.
    public static let fileName = "cribcall.sqlite"

    let writer: any DatabaseWriter

    /// Opens or creates `cribcall.sqlite` in `directory` and migrates it to the current schema.
    ///
    /// - Parameter directory: An existing directory (the product's data directory, mode 0700).
    /// - Throws: ``CribCallStoreError/cannotOpen(path:reason:)`` when the file cannot be created, or a GRDB
    ///   `DatabaseError` when SQLite refuses it (for example a file that is not a database).
    public convenience init(directory: URL) throws {
        let path = directory.appendingPathComponent(Self.fileName).path
        let pool: DatabasePool
        do {
            pool = try SQLiteFile.pool(path: path, configuration: Self.configuration())
        } catch let error as SQLiteFileError {
            throw CribCallStoreError.cannotOpen(path: path, reason: error.reason)
        }
        try self.init(writer: pool)
    }

    /// Creates an empty, migrated in-memory database, for tests and previews.
    public static func inMemory() throws -> CribCallDatabase {
        try CribCallDatabase(writer: DatabaseQueue(configuration: configuration()))
    }

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        try CribCallSchema.migrator.migrate(writer)
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "CribCallDatabase"
        // Another process may hold the write lock for a moment (e.g. a CLI revoke): wait instead of failing.
        configuration.busyMode = .timeout(5)
        return configuration
    }

    /// A number that changes whenever another connection (another process, or another `CribCallDatabase` on the
    /// same file) commits a change; this instance's own writes leave it unchanged.
    ///
    /// Poll it cheaply and reload what you cache (e.g. trusted listeners) when it differs from the last value.
    /// It is SQLite's `PRAGMA data_version`, read on this instance's single writer connection: the value is only
    /// meaningful compared with earlier values from the same instance.
    public func dataVersion() throws -> Int {
        try writer.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        }
    }
}
