import GRDB

/// The database schema as a list of migrations.
///
/// Migrations are frozen once landed: never edit a registered migration, add a new one instead. They are raw SQL so
/// that a change in GRDB's table-definition helpers can never change what an old migration creates.
enum CribCallSchema {
    /// The migrator that brings any older database to the current schema.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Never `eraseDatabaseOnSchemaChange`: this database holds pairings the user cannot recreate silently.
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE trustedListener (
                        listenerId TEXT NOT NULL PRIMARY KEY,
                        name TEXT NOT NULL,
                        publicKey TEXT NOT NULL,
                        fingerprint TEXT NOT NULL UNIQUE,
                        createdAt DATETIME NOT NULL
                    );
                    CREATE TABLE trustedMonitor (
                        monitorId TEXT NOT NULL PRIMARY KEY,
                        name TEXT NOT NULL,
                        fingerprint TEXT NOT NULL UNIQUE,
                        lastKnownHost TEXT,
                        lastKnownPort INTEGER,
                        lastSeq INTEGER NOT NULL DEFAULT 0,
                        createdAt DATETIME NOT NULL
                    );
                    CREATE TABLE setting (
                        key TEXT NOT NULL PRIMARY KEY,
                        value TEXT NOT NULL
                    );
                    CREATE TABLE noiseEvent (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        eventId TEXT NOT NULL UNIQUE,
                        kind TEXT NOT NULL,
                        timestamp INTEGER NOT NULL,
                        peakLevel INTEGER NOT NULL,
                        autoStreamSessionId TEXT
                    );
                    CREATE INDEX noiseEvent_timestamp ON noiseEvent(timestamp);
                    """
            )
        }
        // CribAlert (PROTOCOL.md §11): safety alerts join the event log, in the same `seq` space as noise events;
        // a row with a severity is an alert (its evidence picture is never stored).
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    ALTER TABLE noiseEvent ADD COLUMN severity TEXT;
                    ALTER TABLE noiseEvent ADD COLUMN confidence DOUBLE;
                    ALTER TABLE noiseEvent ADD COLUMN detector TEXT;
                    """
            )
        }
        // The app for parents (CribCallWeb): when the monitor ran (history's sessions) and how each alert ended
        // (the latest ALERT_UPDATED per alert: checking, okay or muted, by whom).
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    CREATE TABLE monitoringSession (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        startedAt INTEGER NOT NULL,
                        lastSeenAt INTEGER NOT NULL,
                        endedAt INTEGER
                    );
                    CREATE INDEX monitoringSession_startedAt ON monitoringSession(startedAt);
                    CREATE TABLE alertUpdate (
                        alertId TEXT NOT NULL PRIMARY KEY,
                        state TEXT NOT NULL,
                        byName TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        mutedUntil INTEGER
                    );
                    """
            )
        }
        // The listener's own history: every event it heard from its monitors (replays included once), so the app
        // on a parent's machine shows past nights.
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: """
                    CREATE TABLE receivedEvent (
                        eventId TEXT NOT NULL PRIMARY KEY,
                        monitorId TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        timestamp INTEGER NOT NULL,
                        peakLevel INTEGER NOT NULL,
                        severity TEXT
                    );
                    CREATE INDEX receivedEvent_timestamp ON receivedEvent(timestamp);
                    """
            )
        }
        return migrator
    }
}
