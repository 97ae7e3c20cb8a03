import GRDB

/// The hub's tables. Migrations are frozen once landed: change the schema with a new one.
enum ArgusSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // the seed's DevicePairing, plus when it was revoked
            try db.create(table: "device") { t in
                t.primaryKey("deviceId", .text)
                t.column("id", .text).notNull().unique()
                t.column("deviceName", .text).notNull()
                t.column("deviceType", .text).notNull()
                t.column("apnsToken", .text)
                t.column("createdAt", .double).notNull()
                t.column("lastSeenAt", .double)
                t.column("isActive", .boolean).notNull().defaults(to: true)
                t.column("revokedAt", .double)
            }
            // live and spent pairing codes (SHA-256 of the code; spent ones are kept a day for the record)
            try db.create(table: "pairingCode") { t in
                t.primaryKey("codeHash", .text)
                t.column("createdAt", .double).notNull()
                t.column("expiresAt", .double).notNull()
                t.column("wrongGuesses", .integer).notNull().defaults(to: 0)
                t.column("usedBy", .text)
                t.column("usedAt", .double)
                t.column("voidedAt", .double)
            }
            try db.create(table: "refreshToken") { t in
                t.primaryKey("tokenHash", .text)
                t.column("deviceId", .text).notNull().indexed()
                t.column("familyId", .text).notNull().indexed()
                t.column("issuedAt", .double).notNull()
                t.column("expiresAt", .double).notNull()
                t.column("rotatedAt", .double)
                t.column("successorHash", .text)
                t.column("revoked", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "camera") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("sourceType", .text).notNull()
                t.column("source", .text).notNull().unique()
                t.column("createdAt", .double).notNull()
                t.column("isOnline", .boolean).notNull().defaults(to: false)
                t.column("lastEventAt", .double)
            }
            try db.create(table: "event") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("id", .text).notNull().unique()
                t.column("cameraId", .text).notNull().indexed().references("camera", onDelete: .cascade)
                t.column("description", .text)
                t.column("createdAt", .double).notNull().indexed()
                t.column("smartDetectionType", .text)
                t.column("confidence", .double)
                t.column("thumbnail", .blob)
                t.column("hasVideo", .boolean).notNull().defaults(to: false)
            }
        }
        // Cameras given with `--camera` are known by their name: two `test` cameras are two cameras. The source
        // stops being unique (the 12-step table rebuild of SQLite's ALTER TABLE documentation; events keep
        // pointing at the same ids).
        migrator.registerMigration("v2: cameras named, sources shared") { db in
            try db.create(table: "camera_v2") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("sourceType", .text).notNull()
                t.column("source", .text).notNull().indexed()
                t.column("createdAt", .double).notNull()
                t.column("isOnline", .boolean).notNull().defaults(to: false)
                t.column("lastEventAt", .double)
            }
            try db.execute(
                sql:
                    "INSERT INTO camera_v2 SELECT id, name, sourceType, source, createdAt, isOnline, lastEventAt FROM camera"
            )
            try db.drop(table: "camera")
            try db.rename(table: "camera_v2", to: "camera")
        }
        return migrator
    }
}
