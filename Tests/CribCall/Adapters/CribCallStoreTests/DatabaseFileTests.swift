import CribCallProtocol
import CribCallStore
import Foundation
import TestSupport
import Testing

@Suite("Database file, migrations and two processes on one file")
struct DatabaseFileTests {
    private func path(_ directory: URL) -> String {
        directory.appendingPathComponent(CribCallDatabase.fileName).path
    }

    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("the database file is created with mode 0600 in WAL mode, and so are its -wal and -shm files")
    func fileMode() async throws {
        try await StoreFixtures.withDirectory { directory in
            let database = try CribCallDatabase(directory: directory)
            try database.trustListener(StoreFixtures.listener("L1", byte: 1), at: StoreFixtures.date(0))
            #expect(try mode(path(directory)) == 0o600)
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path(directory) + suffix) {
                #expect(try mode(path(directory) + suffix) == 0o600)
            }
            #expect(try await TestSQLite.query(path(directory), "PRAGMA journal_mode") == "wal")
        }
    }

    @Test("an existing file with looser permissions is tightened to 0600")
    func tightensExistingFile() throws {
        try StoreFixtures.withDirectory { directory in
            _ = try CribCallDatabase(directory: directory)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path(directory))
            _ = try CribCallDatabase(directory: directory)
            #expect(try mode(path(directory)) == 0o600)
        }
    }

    @Test("a missing directory is a clear error")
    func missingDirectory() throws {
        let directory = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)")
        #expect(throws: CribCallStoreError.self) { try CribCallDatabase(directory: directory) }
    }

    @Test("the schema has the specified tables and columns, and reopening does not migrate again")
    func schemaAndIdempotentMigration() async throws {
        try await StoreFixtures.withDirectory { directory in
            do {
                let database = try CribCallDatabase(directory: directory)
                try database.trustListener(StoreFixtures.listener("L1", byte: 1), at: StoreFixtures.date(0))
            }
            let file = path(directory)
            #expect(try await TestSQLite.query(file, "SELECT identifier FROM grdb_migrations") == "v1\nv2\nv3\nv4")
            let tables = try await TestSQLite.query(
                file,
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                    + "AND name NOT LIKE 'grdb_%' ORDER BY name"
            )
            #expect(
                tables
                    == "alertUpdate\nmonitoringSession\nnoiseEvent\nreceivedEvent\nsetting\ntrustedListener\ntrustedMonitor"
            )
            let columns = try await TestSQLite.query(
                file, "SELECT group_concat(name, ',') FROM pragma_table_info('trustedMonitor')"
            )
            #expect(columns == "monitorId,name,fingerprint,lastKnownHost,lastKnownPort,lastSeq,createdAt")
            let autoincrement = try await TestSQLite.query(
                file, "SELECT sql FROM sqlite_master WHERE name = 'noiseEvent'"
            )
            #expect(autoincrement.contains("seq INTEGER PRIMARY KEY AUTOINCREMENT"))

            let reopened = try CribCallDatabase(directory: directory)
            let again = try CribCallDatabase(directory: directory)
            #expect(try await TestSQLite.query(file, "SELECT count(*) FROM grdb_migrations") == "4")
            #expect(try reopened.trustedListeners().map(\.listenerId) == ["L1"])
            #expect(try again.trustedListeners().map(\.listenerId) == ["L1"])
        }
    }

    @Test("a database an older version left (v1, with noise events) gains the alert columns; its events stay noise")
    func migratesFromV1() async throws {
        try await StoreFixtures.withDirectory { directory in
            let file = path(directory)
            // The v1 schema exactly as that version created it, with one event, written by sqlite3.
            let v1 = """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1');
                CREATE TABLE trustedListener (listenerId TEXT NOT NULL PRIMARY KEY, name TEXT NOT NULL,
                    publicKey TEXT NOT NULL, fingerprint TEXT NOT NULL UNIQUE, createdAt DATETIME NOT NULL);
                CREATE TABLE trustedMonitor (monitorId TEXT NOT NULL PRIMARY KEY, name TEXT NOT NULL,
                    fingerprint TEXT NOT NULL UNIQUE, lastKnownHost TEXT, lastKnownPort INTEGER,
                    lastSeq INTEGER NOT NULL DEFAULT 0, createdAt DATETIME NOT NULL);
                CREATE TABLE setting (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE noiseEvent (seq INTEGER PRIMARY KEY AUTOINCREMENT, eventId TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL, timestamp INTEGER NOT NULL, peakLevel INTEGER NOT NULL,
                    autoStreamSessionId TEXT);
                CREATE INDEX noiseEvent_timestamp ON noiseEvent(timestamp);
                INSERT INTO noiseEvent (eventId, kind, timestamp, peakLevel) VALUES ('old', 'noise', 5, 77);
                """
            let made = try await Subprocess.run("sqlite3", [file, v1])
            #expect(made.status == 0, "\(made.stderrText)")
            let database = try CribCallDatabase(directory: directory)
            let events = try database.noiseEvents(afterSeq: 0, limit: 10)
            #expect(events.map(\.eventId) == ["old"] && events.first?.isSafetyAlert == false)
            let alert = try database.appendSafetyAlert(
                alertId: "a1", kind: "stillness", severity: "medium", timestamp: 6, confidence: 0.8,
                detector: "frame-difference")
            #expect(alert.seq == 2 && alert.isSafetyAlert)
            #expect(try await TestSQLite.query(file, "SELECT identifier FROM grdb_migrations") == "v1\nv2\nv3\nv4")
            // v3: the app's history tables, empty.
            #expect(try database.monitoringSessions(from: 0, to: .max).isEmpty)
        }
    }

    @Test(
        "another process's revoke (sqlite3, as `cribcall listeners revoke` in a second terminal) changes dataVersion and is seen"
    )
    func twoProcesses() async throws {
        try await StoreFixtures.withDirectory { directory in
            let monitor = try CribCallDatabase(directory: directory)
            // A second store object in the same process shares the monitor's connections (one pool per file).
            let sameProcess = try CribCallDatabase(directory: directory)
            try monitor.trustListener(StoreFixtures.listener("L1", byte: 1), at: StoreFixtures.date(0))
            try monitor.trustListener(StoreFixtures.listener("L2", byte: 2), at: StoreFixtures.date(0))

            let before = try monitor.dataVersion()
            #expect(try monitor.dataVersion() == before, "polling without changes must be stable")
            try monitor.setPinPairingFailures(1)
            try sameProcess.setPinPairingFailures(2)
            #expect(try monitor.dataVersion() == before, "the process's own writes do not count")
            #expect(try monitor.pinPairingFailures() == 2)

            let revoke = try await Subprocess.run(
                "sqlite3", [path(directory), "DELETE FROM trustedListener WHERE listenerId = 'L1'"])
            #expect(revoke.status == 0, "\(revoke.stderrText)")
            #expect(try monitor.dataVersion() != before)
            #expect(try monitor.trustedListeners().map(\.listenerId) == ["L2"])
            #expect(try monitor.trustedListener(fingerprint: StoreFixtures.fingerprint(1)) == nil)

            // And the other way round: the other process reads what the monitor wrote.
            try monitor.trustListener(StoreFixtures.listener("L3", byte: 3), at: StoreFixtures.date(1))
            #expect(
                try await TestSQLite.query(path(directory), "SELECT listenerId FROM trustedListener ORDER BY 1")
                    == "L2\nL3")
        }
    }

    @Test("concurrent writers on one file do not fail with SQLITE_BUSY")
    func concurrentWriters() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try CribCallDatabase(directory: directory)
        let second = try CribCallDatabase(directory: directory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (offset, database) in [first, second].enumerated() {
                group.addTask {
                    for index in 0..<100 {
                        try database.appendNoiseEvent(
                            eventId: "p\(offset)-\(index)", kind: "noise", timestamp: 0, peakLevel: 1,
                            autoStreamSessionId: nil
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
        let seqs = try first.noiseEvents(afterSeq: 0, limit: 1000).map(\.seq)
        #expect(seqs == Array(1...200))
    }
}
