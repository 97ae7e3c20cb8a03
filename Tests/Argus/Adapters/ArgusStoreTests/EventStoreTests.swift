import ArgusStore
import ArgusTestSupport
import Foundation
import TestSupport
import Testing

@Suite("Events: newest first, pages that new events do not shift")
struct EventStoreTests {
    @Test("paging as of the first page's sequence number is stable while events arrive")
    func stablePages() throws {
        let database = try ArgusDatabase.inMemory()
        let camera = try database.configuredCamera(name: "Test pattern", source: "test", sourceType: "test")
        var at = ArgusFixtures.epoch
        for index in 0..<25 {
            at = at.addingTimeInterval(1)
            try database.addEvent(
                cameraId: camera.id, description: "Motion \(index)", smartDetectionType: "motion", confidence: nil,
                thumbnail: Data([0xFF, 0xD8, UInt8(index)]), at: at)
        }
        let first = try database.events(page: 1, limit: 10, asOf: nil)
        #expect(first.total == 25 && first.events.first?.description == "Motion 24")
        for index in 25..<30 {
            at = at.addingTimeInterval(1)
            try database.addEvent(
                cameraId: camera.id, description: "Motion \(index)", smartDetectionType: "motion", confidence: nil,
                thumbnail: nil, at: at)
        }
        let second = try database.events(page: 2, limit: 10, asOf: first.asOf)
        let third = try database.events(page: 3, limit: 10, asOf: first.asOf)
        let seen = (first.events + second.events + third.events).map(\.description)
        #expect(seen == (0..<25).reversed().map { "Motion \($0)" }, "every event once, in order")
        #expect(try database.events(page: 1, limit: 10, asOf: nil).total == 30)
        #expect(try database.recentEvents(limit: 3).map(\.description) == ["Motion 29", "Motion 28", "Motion 27"])
        let event = try #require(first.events.first)
        #expect(event.cameraName == "Test pattern" && event.hasThumbnail)
        #expect(try database.thumbnail(eventId: event.id) == Data([0xFF, 0xD8, 24]))
        #expect(try database.cameras().first?.lastEventAt == at)
        #expect(try database.pruneEvents(before: ArgusFixtures.epoch.addingTimeInterval(11)) == 10)
    }

    @Test("a thumbnail that comes later is set once, never over one already there, and not for a pruned event")
    func lateThumbnail() throws {
        let database = try ArgusDatabase.inMemory()
        let camera = try database.monitorCamera(source: "cribcall:m1", name: "Nursery")
        let event = try database.addEvent(
            cameraId: camera.id, description: "Noise detected", smartDetectionType: "noise", confidence: nil,
            thumbnail: nil, at: ArgusFixtures.epoch)
        #expect(!event.hasThumbnail)
        #expect(try database.thumbnail(eventId: event.id) == nil)
        #expect(try database.setThumbnail(eventId: event.id, Data([0xFF, 0xD8, 1])))
        #expect(!(try database.setThumbnail(eventId: event.id, Data([0xFF, 0xD8, 2]))), "the first picture stays")
        #expect(try database.thumbnail(eventId: event.id) == Data([0xFF, 0xD8, 1]))
        #expect(try database.event(event.id)?.hasThumbnail == true)
        try database.pruneEvents(before: ArgusFixtures.epoch.addingTimeInterval(1))
        #expect(!(try database.setThumbnail(eventId: event.id, Data([0xFF, 0xD8, 3]))))
    }

    @Test("cameras are known by name (two test patterns are two cameras), monitors by id; listed by name")
    func cameraIdentity() throws {
        let database = try ArgusDatabase.inMemory()
        let garden = try database.configuredCamera(name: "Garden", source: "test", sourceType: "test")
        let attic = try database.configuredCamera(name: "attic", source: "test", sourceType: "test")
        #expect(garden.id != attic.id, "one source, two cameras")
        let moved = try database.configuredCamera(name: "Garden", source: "rtsp://10.0.0.9/live", sourceType: "rtsp")
        #expect(moved.id == garden.id && moved.source == "rtsp://10.0.0.9/live", "a new address for the same camera")
        let nursery = try database.monitorCamera(source: "cribcall:m1", name: "Nursery")
        #expect(try database.monitorCamera(source: "cribcall:m1", name: "Baby").id == nursery.id, "renamed monitor")
        #expect(
            try database.configuredCamera(name: "Baby", source: "test", sourceType: "test").id != nursery.id,
            "a camera named like a monitor is not the monitor")
        let event = try database.addEvent(
            cameraId: attic.id, description: "Motion", smartDetectionType: "motion", confidence: nil, thumbnail: nil,
            at: ArgusFixtures.epoch)
        #expect(try database.event(event.id)?.cameraName == "attic", "credited to its own camera")
        #expect(try database.cameras().map(\.name) == ["attic", "Baby", "Baby", "Garden"])
    }

    @Test("a hub database of the first schema (one camera per source) opens, its cameras and events kept")
    func migratesFromFirstSchema() async throws {
        let directory = try Subprocess.temporaryDirectory("argus-v1")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The first schema's camera table, as a hub of the previous release left it.
        let path = directory.appendingPathComponent(ArgusDatabase.fileName).path
        do {
            let database = try ArgusDatabase(directory: directory)
            let camera = try database.configuredCamera(name: "Porch", source: "test", sourceType: "test")
            try database.addEvent(
                cameraId: camera.id, description: "Motion", smartDetectionType: "motion", confidence: nil,
                thumbnail: nil, at: ArgusFixtures.epoch)
        }
        let downgrade = try await Subprocess.run(
            "sqlite3",
            [
                path,
                """
                PRAGMA foreign_keys = OFF;
                CREATE TABLE camera_v1 (id TEXT PRIMARY KEY, name TEXT NOT NULL, sourceType TEXT NOT NULL,
                    source TEXT NOT NULL UNIQUE, createdAt DOUBLE NOT NULL, isOnline BOOLEAN NOT NULL DEFAULT 0,
                    lastEventAt DOUBLE);
                INSERT INTO camera_v1 SELECT * FROM camera; DROP TABLE camera; ALTER TABLE camera_v1 RENAME TO camera;
                DELETE FROM grdb_migrations WHERE identifier LIKE 'v2%';
                """,
            ])
        #expect(downgrade.status == 0, "\(downgrade.stderrText)")
        let reopened = try ArgusDatabase(directory: directory)
        #expect(try reopened.cameras().map(\.name) == ["Porch"])
        #expect(try reopened.events(page: 1, limit: 10, asOf: nil).events.first?.cameraName == "Porch")
        let second = try reopened.configuredCamera(name: "Shed", source: "test", sourceType: "test")
        #expect(try reopened.cameras().map(\.id).contains(second.id))
        let check = try await Subprocess.run("sqlite3", [path, "PRAGMA foreign_key_check; PRAGMA integrity_check"])
        #expect(check.stdoutText == "ok\n", "\(check.stdoutText)")
    }
}
