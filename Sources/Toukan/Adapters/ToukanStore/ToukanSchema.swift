import GRDB

/// The ledger's schema as a list of migrations.
///
/// Migrations are frozen once landed: never edit a registered migration, add a new one instead. They are raw SQL so
/// that a change in GRDB's table-definition helpers can never change what an old migration creates. Dates are
/// seconds since 1970 (`REAL`), so sub-second backoff times survive the round trip.
enum ToukanSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Never `eraseDatabaseOnSchemaChange`: the ledger is the only record of audio not yet uploaded.
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE recording (
                        id TEXT NOT NULL PRIMARY KEY,
                        filePath TEXT NOT NULL UNIQUE,
                        recordedAt REAL NOT NULL,
                        duration REAL NOT NULL,
                        gaps TEXT NOT NULL,
                        idempotencyKey TEXT NOT NULL UNIQUE,
                        uploadStatus TEXT NOT NULL
                            CHECK (uploadStatus IN ('pending', 'uploading', 'uploaded', 'failed')),
                        memoryId TEXT,
                        retryCount INTEGER NOT NULL,
                        lastAttempt REAL,
                        uploadOffset INTEGER NOT NULL,
                        uploadLocation TEXT,
                        retryNotBefore REAL,
                        lastError TEXT,
                        uploadedAt REAL,
                        purgeAfter REAL,
                        fileDeletedAt REAL,
                        progressSent INTEGER,
                        progressTotal INTEGER
                    );
                    CREATE INDEX recording_recordedAt ON recording (recordedAt);
                    CREATE INDEX recording_uploadStatus ON recording (uploadStatus);
                    """)
        }
        // An unreachable server is offline, not a failure: its attempts are counted apart, with since when.
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    ALTER TABLE recording ADD COLUMN offlineAttempts INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE recording ADD COLUMN offlineSince REAL;
                    ALTER TABLE recording ADD COLUMN recoveredAfterCrash INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        return migrator
    }
}
