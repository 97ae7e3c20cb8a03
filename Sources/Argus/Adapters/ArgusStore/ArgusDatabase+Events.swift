public import Foundation
import GRDB

/// A camera the hub watches.
public struct Camera: Sendable, Hashable {
    public var id: String
    public var name: String
    /// `v4l2`, `rtsp`, `test` or `cribcall`.
    public var sourceType: String
    /// What it was added as (`/dev/video0`, `rtsp://…`, `test`, a monitor's id).
    public var source: String
    public var isOnline: Bool
    public var lastEventAt: Date?
}

/// Something a camera saw.
public struct CameraEvent: Sendable, Hashable {
    /// Its place in the order events arrived (`as_of` pages stop at one).
    public var seq: Int64
    public var id: String
    public var cameraId: String
    public var cameraName: String
    public var description: String?
    public var createdAt: Date
    public var smartDetectionType: String?
    public var confidence: Double?
    public var hasVideo: Bool
    public var hasThumbnail: Bool
}

/// One page of events, newest first, as of a sequence number.
public struct EventPage: Sendable, Hashable {
    public var events: [CameraEvent]
    /// Events up to `asOf` (what a client pages through).
    public var total: Int
    public var asOf: Int64
}

extension ArgusDatabase {
    // MARK: cameras

    /// The camera the owner named `name` (`--camera NAME=SOURCE`), made the first time: a stable id across
    /// restarts, also when its source changes (a new address for the same camera). Two cameras of one source (two
    /// `test` patterns) are two cameras.
    public func configuredCamera(name: String, source: String, sourceType: String) throws -> Camera {
        try writer.write { db in
            let named = try Row.fetchOne(
                db, sql: "SELECT * FROM camera WHERE name = ? AND sourceType <> ? ORDER BY createdAt, id LIMIT 1",
                arguments: [name, Self.monitorSourceType])
            if let named {
                var camera = Self.camera(named)
                camera.source = source
                camera.sourceType = sourceType
                try db.execute(
                    sql: "UPDATE camera SET source = ?, sourceType = ? WHERE id = ?",
                    arguments: [source, sourceType, camera.id])
                return camera
            }
            return try Self.insertCamera(db, name: name, source: source, sourceType: sourceType)
        }
    }

    /// The camera of a paired CribCall monitor, known by `source` (the monitor's id), whatever it is called now.
    public func monitorCamera(source: String, name: String) throws -> Camera {
        try writer.write { db in
            if let row = try Row.fetchOne(
                db, sql: "SELECT * FROM camera WHERE source = ? AND sourceType = ?",
                arguments: [source, Self.monitorSourceType])
            {
                try db.execute(sql: "UPDATE camera SET name = ? WHERE source = ?", arguments: [name, source])
                var camera = Self.camera(row)
                camera.name = name
                return camera
            }
            return try Self.insertCamera(db, name: name, source: source, sourceType: Self.monitorSourceType)
        }
    }

    /// The `sourceType` of a CribCall monitor's camera.
    public static let monitorSourceType = "cribcall"

    private static func insertCamera(_ db: Database, name: String, source: String, sourceType: String) throws -> Camera
    {
        let id = UUID().uuidString.lowercased()
        try db.execute(
            sql: "INSERT INTO camera (id, name, sourceType, source, createdAt) VALUES (?, ?, ?, ?, ?)",
            arguments: [id, name, sourceType, source, Date().timeIntervalSince1970])
        return Camera(id: id, name: name, sourceType: sourceType, source: source, isOnline: false, lastEventAt: nil)
    }

    public func setCameraOnline(_ id: String, _ online: Bool) throws {
        try writer.write { db in
            try db.execute(sql: "UPDATE camera SET isOnline = ? WHERE id = ?", arguments: [online, id])
        }
    }

    /// The cameras by name (as people look for one). `only` limits them to these ids (this run's cameras).
    public func cameras(only ids: Set<String>? = nil) throws -> [Camera] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM camera ORDER BY name COLLATE NOCASE, name, createdAt, id")
                .map(Self.camera)
                .filter { ids?.contains($0.id) ?? true }
        }
    }

    // MARK: events

    /// Records an event with its thumbnail (already within its size limit) and returns it.
    @discardableResult
    public func addEvent(
        cameraId: String, description: String?, smartDetectionType: String?, confidence: Double?,
        thumbnail: Data?, at: Date
    ) throws -> CameraEvent {
        try writer.write { db in
            let id = UUID().uuidString.lowercased()
            try db.execute(
                sql: """
                    INSERT INTO event (id, cameraId, description, createdAt, smartDetectionType, confidence, thumbnail)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [id, cameraId, description, Self.seconds(at), smartDetectionType, confidence, thumbnail])
            try db.execute(
                sql: "UPDATE camera SET lastEventAt = ? WHERE id = ?", arguments: [Self.seconds(at), cameraId])
            return try Self.fetchEvents(db, where: "e.id = ?", arguments: [id], limit: 1).first!
        }
    }

    /// Page `page` (from 1) of `limit` events, newest first, among those up to `asOf` (nil: up to the newest now,
    /// which the page then names, so later pages are not shifted by events that arrive meanwhile).
    public func events(page: Int, limit: Int, asOf: Int64?) throws -> EventPage {
        try writer.read { db in
            let newest = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM event") ?? 0
            let asOf = min(asOf ?? newest, newest)
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM event WHERE seq <= ?", arguments: [asOf]) ?? 0
            let events = try Self.fetchEvents(
                db, where: "e.seq <= ?", arguments: [asOf], limit: limit, offset: (page - 1) * limit)
            return EventPage(events: events, total: total, asOf: asOf)
        }
    }

    /// The newest `limit` events.
    public func recentEvents(limit: Int) throws -> [CameraEvent] {
        try writer.read { db in try Self.fetchEvents(db, where: "1", arguments: [], limit: limit) }
    }

    public func event(_ id: String) throws -> CameraEvent? {
        try writer.read { db in try Self.fetchEvents(db, where: "e.id = ?", arguments: [id], limit: 1).first }
    }

    public func thumbnail(eventId: String) throws -> Data? {
        try writer.read { db in
            try Data.fetchOne(db, sql: "SELECT thumbnail FROM event WHERE id = ?", arguments: [eventId])
        }
    }

    /// Gives an event its thumbnail once it is there (a picture that takes a while, e.g. from a monitor's stream).
    /// - Returns: Whether the event still exists and had none.
    @discardableResult
    public func setThumbnail(eventId: String, _ jpeg: Data) throws -> Bool {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE event SET thumbnail = ? WHERE id = ? AND thumbnail IS NULL", arguments: [jpeg, eventId])
            return db.changesCount == 1
        }
    }

    /// Events older than `before` go (with their thumbnails); returns how many.
    @discardableResult
    public func pruneEvents(before: Date) throws -> Int {
        try writer.write { db in
            try db.execute(sql: "DELETE FROM event WHERE createdAt < ?", arguments: [Self.seconds(before)])
            return db.changesCount
        }
    }

    private static func fetchEvents(
        _ db: Database, where condition: String, arguments: StatementArguments, limit: Int, offset: Int = 0
    ) throws -> [CameraEvent] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT e.seq, e.id, e.cameraId, c.name AS cameraName, e.description, e.createdAt, e.smartDetectionType,
                       e.confidence, e.hasVideo, e.thumbnail IS NOT NULL AS hasThumbnail
                FROM event e JOIN camera c ON c.id = e.cameraId
                WHERE \(condition) ORDER BY e.createdAt DESC, e.seq DESC LIMIT ? OFFSET ?
                """,
            arguments: arguments + [limit, offset]
        ).map { row in
            CameraEvent(
                seq: row["seq"], id: row["id"], cameraId: row["cameraId"], cameraName: row["cameraName"],
                description: row["description"], createdAt: date(row["createdAt"]),
                smartDetectionType: row["smartDetectionType"], confidence: row["confidence"],
                hasVideo: row["hasVideo"], hasThumbnail: row["hasThumbnail"])
        }
    }

    static func camera(_ row: Row) -> Camera {
        Camera(
            id: row["id"], name: row["name"], sourceType: row["sourceType"], source: row["source"],
            isOnline: row["isOnline"], lastEventAt: (row["lastEventAt"] as Double?).map(date))
    }
}
