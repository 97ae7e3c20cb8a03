public import ArgusAuth
public import Foundation
import GRDB
import SQLiteFiles

/// The hub's database: devices and their refresh tokens, pairing codes, cameras and events, in one SQLite file
/// (`argus.sqlite`, 0600, WAL) so `argus-hub pair` and `argus-hub devices revoke` can act while the hub runs.
///
/// Every operation is one transaction; SQLite serialises writers, so of two verifications of one code exactly one
/// consumes it, and a rotation cannot be raced into two live successors.
public final class ArgusDatabase: Sendable {
    public static let fileName = "argus.sqlite"
    let writer: any DatabaseWriter

    /// Opens or creates `argus.sqlite` in `directory` (which must exist) and migrates it. Within one process every
    /// `ArgusDatabase` of a directory shares one connection pool (``SQLiteFile``), so the hub, its owner's page and
    /// its commands never open the file beside each other.
    public convenience init(directory: URL) throws {
        let path = directory.appendingPathComponent(Self.fileName).path
        var configuration = Configuration()
        configuration.label = "ArgusDatabase"
        configuration.busyMode = .timeout(5)
        let pool: DatabasePool
        do {
            pool = try SQLiteFile.pool(path: path, configuration: configuration)
        } catch let error as SQLiteFileError {
            throw ArgusStoreError(error.description)
        }
        try self.init(writer: pool)
    }

    /// An empty, migrated database in memory (tests).
    public static func inMemory() throws -> ArgusDatabase {
        try ArgusDatabase(writer: DatabaseQueue())
    }

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        try ArgusSchema.migrator.migrate(writer)
    }

    static func seconds(_ date: Date) -> Double { date.timeIntervalSince1970 }
    static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
}
