import Foundation
import GRDB
import SQLiteFiles
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One pool per file per process, and no raw open beside a live database: checked against another process, the
/// `sqlite3` program, which deletes a write-ahead log it believes nobody else uses.
@Suite("SQLite files: one pool per file per process, never a raw open beside it")
struct SQLiteFileTests {
    /// A database with a table and a row written through `pool`, so its write-ahead log holds data.
    static func populated(_ path: String) throws -> DatabasePool {
        let pool = try SQLiteFile.pool(path: path)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO item (name) VALUES ('kept')")
        }
        return pool
    }

    /// `sqlite3 FILE 'SELECT count(*) FROM item'` in another process: opens the file and closes it.
    static func otherProcessReads(_ path: String) async throws -> String {
        let result = try await Subprocess.run("sqlite3", [path, "SELECT count(*) FROM item"])
        #expect(result.status == 0, "sqlite3 (apt-get install sqlite3): \(result.stderrText)")
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a second opener in the process gets the same pool; the file and its log are owner-only")
    func onePoolPerFile() throws {
        let directory = try Subprocess.temporaryDirectory("sqlite-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("one.sqlite").path
        let pool = try Self.populated(path)
        #expect(try SQLiteFile.pool(path: path) === pool)
        #expect(try SQLiteFile.pool(path: directory.path + "/./one.sqlite") === pool, "the same file by another name")
        #expect(SQLiteFile.isOpen(path: path))
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
    }

    @Test("an existing file open to others is made owner-only by path; a link or a folder is refused with why")
    func permissionsAndRefusals() throws {
        let directory = try Subprocess.temporaryDirectory("sqlite-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("open.sqlite").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        _ = try SQLiteFile.pool(path: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        let link = directory.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect {
            try SQLiteFile.pool(path: link)
        } throws: { error in
            "\(error)".contains("not a regular file") && "\(error)".contains("--data-dir")
        }
        #expect(throws: SQLiteFileError.self) { try SQLiteFile.pool(path: directory.path) }
    }

    @Test("another process opening and closing the file leaves this process's write-ahead log and data in place")
    func logSurvivesAnotherProcess() async throws {
        let directory = try Subprocess.temporaryDirectory("sqlite-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("shared.sqlite").path
        let pool = try Self.populated(path)
        // What a second store object of the same process does: it must not touch the file outside SQLite.
        _ = try SQLiteFile.pool(path: path)
        #expect(try await Self.otherProcessReads(path) == "1")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the log of a live pool was deleted")
        try await pool.write { db in try db.execute(sql: "INSERT INTO item (name) VALUES ('after')") }
        #expect(try await Self.otherProcessReads(path) == "2")
        let check = try await Subprocess.run("sqlite3", [path, "PRAGMA integrity_check"])
        #expect(check.stdoutText == "ok\n")
    }

    @Test("control: a raw open and close beside the live pool drops its locks, and the other process deletes the log")
    func rawCloseDropsTheLocks() async throws {
        let directory = try Subprocess.temporaryDirectory("sqlite-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("raw.sqlite").path
        let pool = try Self.populated(path)
        // The defect of issue 31: a permission fix through a descriptor of the live database.
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        #expect(descriptor >= 0)
        close(descriptor)
        #expect(try await Self.otherProcessReads(path) == "1")
        #expect(
            !FileManager.default.fileExists(atPath: path + "-wal"),
            "the other process kept the log: this test no longer shows why SQLiteFile never opens a live file")
        withExtendedLifetime(pool) {}
    }
}
