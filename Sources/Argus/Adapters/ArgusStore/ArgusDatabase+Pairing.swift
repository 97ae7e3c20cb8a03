public import ArgusAuth
public import Foundation
import GRDB

/// A device that verified a code (the seed's DevicePairing).
public struct PairedDevice: Sendable, Hashable {
    public var id: String
    public var deviceId: String
    public var deviceName: String
    public var deviceType: String
    public var apnsToken: String?
    public var createdAt: Date
    public var lastSeenAt: Date?
    public var isActive: Bool
    public var revokedAt: Date?
}

/// What the app asked to be paired as.
public struct DeviceRequest: Sendable, Hashable {
    public var deviceId: String
    public var deviceName: String
    public var deviceType: String

    public init(deviceId: String, deviceName: String, deviceType: String) {
        self.deviceId = deviceId
        self.deviceName = deviceName
        self.deviceType = deviceType
    }
}

/// How a verification ended.
public enum PairingOutcome: Sendable, Hashable {
    /// The code was live and is now used up: the device is paired and holds this refresh token (its first).
    case paired(refreshToken: String)
    /// The code was right but its 5 minutes are over.
    case expired
    /// No live code matches (unknown, already used, or void); `voided` counts live codes that reached their
    /// wrong-guess limit with this guess.
    case invalid(voided: Int)
}

/// How a refresh ended.
public enum RefreshOutcome: Sendable, Hashable {
    /// A new refresh token (the presented one is used up).
    case rotated(refreshToken: String)
    /// Refused, nothing changed (unknown, expired, revoked, another device's, or the device is revoked).
    case refused
    /// A used token came back: taken for theft, every token of the device is revoked now (refresh and, through
    /// ``ArgusDatabase/activeDevice(_:)``, access) and the device is unpaired: it must pair again.
    case reuseDetected
}

extension ArgusDatabase {
    // MARK: pairing codes

    /// A new code, live for ``PairingCode/lifetime`` from `now`; never one equal to another live code.
    public func createPairingCode(now: Date) throws -> (code: String, expiresAt: Date) {
        try writer.write { db in
            // spent and expired codes older than a day go
            try db.execute(
                sql: "DELETE FROM pairingCode WHERE expiresAt < ?", arguments: [Self.seconds(now) - 86_400])
            while true {
                let code = PairingCode.generate()
                let hash = RefreshToken.hash(code)
                if try Row.fetchOne(db, sql: "SELECT 1 FROM pairingCode WHERE codeHash = ?", arguments: [hash]) != nil {
                    continue
                }
                let expiresAt = now.addingTimeInterval(PairingCode.lifetime)
                try db.execute(
                    sql: "INSERT INTO pairingCode (codeHash, createdAt, expiresAt) VALUES (?, ?, ?)",
                    arguments: [hash, Self.seconds(now), Self.seconds(expiresAt)])
                return (code, expiresAt)
            }
        }
    }

    /// Checks `code` and, when it is live, uses it up for `device` in the same transaction: the device is paired
    /// (a device paired before under the same id is replaced, its tokens revoked) and gets its first refresh token.
    /// A wrong code counts against every live code, and voids those that reach ``PairingCode/wrongGuessesAllowed``.
    public func verifyPairingCode(_ code: String, device: DeviceRequest, now: Date) throws -> PairingOutcome {
        guard PairingCode.isWellFormed(code) else { return .invalid(voided: 0) }
        let hash = RefreshToken.hash(code)
        let at = Self.seconds(now)
        return try writer.write { db in
            let live = "usedBy IS NULL AND voidedAt IS NULL AND expiresAt > ?"
            if let row = try Row.fetchOne(db, sql: "SELECT * FROM pairingCode WHERE codeHash = ?", arguments: [hash]) {
                // Used or void: as good as unknown (the spec's pairing_code_invalid); only time makes it expired.
                guard (row["usedBy"] as String?) == nil, (row["voidedAt"] as Double?) == nil else {
                    return .invalid(voided: 0)
                }
                guard (row["expiresAt"] as Double) > at else { return .expired }
                try db.execute(
                    sql: "UPDATE pairingCode SET usedBy = ?, usedAt = ? WHERE codeHash = ? AND \(live)",
                    arguments: [device.deviceId, at, hash, at])
                guard db.changesCount == 1 else { return .invalid(voided: 0) }
                try Self.pair(device, db: db, at: at)
                return .paired(refreshToken: try Self.issueRefreshToken(db: db, deviceId: device.deviceId, at: at))
            }
            try db.execute(sql: "UPDATE pairingCode SET wrongGuesses = wrongGuesses + 1 WHERE \(live)", arguments: [at])
            try db.execute(
                sql: "UPDATE pairingCode SET voidedAt = ? WHERE \(live) AND wrongGuesses >= ?",
                arguments: [at, at, PairingCode.wrongGuessesAllowed])
            return .invalid(voided: db.changesCount)
        }
    }

    private static func pair(_ device: DeviceRequest, db: Database, at: Double) throws {
        try db.execute(sql: "UPDATE refreshToken SET revoked = 1 WHERE deviceId = ?", arguments: [device.deviceId])
        try db.execute(
            sql: """
                INSERT INTO device (deviceId, id, deviceName, deviceType, createdAt, lastSeenAt, isActive)
                VALUES (?, ?, ?, ?, ?, ?, 1)
                ON CONFLICT(deviceId) DO UPDATE SET id = excluded.id, deviceName = excluded.deviceName,
                    deviceType = excluded.deviceType, apnsToken = NULL, createdAt = excluded.createdAt,
                    lastSeenAt = excluded.lastSeenAt, isActive = 1, revokedAt = NULL
                """,
            arguments: [device.deviceId, UUID().uuidString.lowercased(), device.deviceName, device.deviceType, at, at])
    }

    private static func issueRefreshToken(
        db: Database, deviceId: String, at: Double, familyId: String = UUID().uuidString
    ) throws -> String {
        let token = RefreshToken.generate()
        try db.execute(
            sql: """
                INSERT INTO refreshToken (tokenHash, deviceId, familyId, issuedAt, expiresAt) VALUES (?, ?, ?, ?, ?)
                """,
            arguments: [RefreshToken.hash(token), deviceId, familyId, at, at + RefreshToken.lifetime])
        return token
    }

    // MARK: refresh tokens

    /// Applies ``RefreshDecision`` to the token `token` presented by `deviceId` at `now`, in one transaction.
    public func refresh(_ token: String, deviceId: String, now: Date) throws -> RefreshOutcome {
        guard RefreshToken.isWellFormed(token) else { return .refused }
        let hash = RefreshToken.hash(token)
        let at = Self.seconds(now)
        return try writer.write { db in
            guard
                try Bool.fetchOne(db, sql: "SELECT isActive FROM device WHERE deviceId = ?", arguments: [deviceId])
                    == true
            else { return .refused }
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT t.*, s.rotatedAt AS successorRotatedAt FROM refreshToken t
                    LEFT JOIN refreshToken s ON s.tokenHash = t.successorHash WHERE t.tokenHash = ?
                    """,
                arguments: [hash])
            let stored = row.map { row in
                StoredRefreshToken(
                    deviceId: row["deviceId"], familyId: row["familyId"], issuedAt: Self.date(row["issuedAt"]),
                    expiresAt: Self.date(row["expiresAt"]), rotatedAt: (row["rotatedAt"] as Double?).map(Self.date),
                    successorUsed: (row["successorRotatedAt"] as Double?) != nil, revoked: row["revoked"])
            }
            switch RefreshDecision.decide(stored, deviceId: deviceId, now: now) {
            case .refuse:
                return .refused
            case .reuseDetected(let familyId):
                try db.execute(sql: "UPDATE refreshToken SET revoked = 1 WHERE familyId = ?", arguments: [familyId])
                try Self.revoke(deviceId, db: db, at: at)
                return .reuseDetected
            case .rotate, .retryAfterLostResponse:
                guard let row, let stored else { return .refused }
                if let lost = row["successorHash"] as String? {
                    try db.execute(sql: "UPDATE refreshToken SET revoked = 1 WHERE tokenHash = ?", arguments: [lost])
                }
                let next = try Self.issueRefreshToken(db: db, deviceId: deviceId, at: at, familyId: stored.familyId)
                try db.execute(
                    sql:
                        "UPDATE refreshToken SET rotatedAt = COALESCE(rotatedAt, ?), successorHash = ? WHERE tokenHash = ?",
                    arguments: [at, RefreshToken.hash(next), hash])
                try db.execute(sql: "UPDATE device SET lastSeenAt = ? WHERE deviceId = ?", arguments: [at, deviceId])
                return .rotated(refreshToken: next)
            }
        }
    }

    // MARK: devices

    /// Every device ever paired, newest first.
    public func devices() throws -> [PairedDevice] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY createdAt DESC, deviceId").map(Self.device)
        }
    }

    /// The device, when it is paired and not revoked (checked on every request: a revoked device's access token
    /// stops working at once, not an hour later).
    public func activeDevice(_ deviceId: String) throws -> PairedDevice? {
        try writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM device WHERE deviceId = ? AND isActive = 1", arguments: [deviceId])
                .map(Self.device)
        }
    }

    /// Revokes `deviceId`: its refresh tokens, its push token, and (through ``activeDevice(_:)``) its access
    /// tokens. Returns false when no such device is paired.
    @discardableResult
    public func revokeDevice(_ deviceId: String, now: Date) throws -> Bool {
        try writer.write { db in try Self.revoke(deviceId, db: db, at: Self.seconds(now)) }
    }

    /// Unpairs `deviceId` in the transaction of `db`; false when it was not paired.
    private static func revoke(_ deviceId: String, db: Database, at: Double) throws -> Bool {
        try db.execute(
            sql: "UPDATE device SET isActive = 0, revokedAt = ?, apnsToken = NULL WHERE deviceId = ? AND isActive = 1",
            arguments: [at, deviceId])
        let changed = db.changesCount == 1
        try db.execute(sql: "UPDATE refreshToken SET revoked = 1 WHERE deviceId = ?", arguments: [deviceId])
        return changed
    }

    /// Sets (or with nil clears) the APNs device token of an active device; false when it is not active.
    @discardableResult
    public func setPushToken(_ token: String?, deviceId: String) throws -> Bool {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE device SET apnsToken = ? WHERE deviceId = ? AND isActive = 1",
                arguments: [token, deviceId])
            return db.changesCount == 1
        }
    }

    /// Forgets `token` as `deviceId`'s push token (APNs said it is no longer valid), unless the app has registered
    /// another one meanwhile.
    public func forgetPushToken(_ token: String, deviceId: String) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE device SET apnsToken = NULL WHERE deviceId = ? AND apnsToken = ?",
                arguments: [deviceId, token])
        }
    }

    /// Active devices with a push token.
    public func pushTargets() throws -> [PairedDevice] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device WHERE isActive = 1 AND apnsToken IS NOT NULL")
                .map(Self.device)
        }
    }

    static func device(_ row: Row) -> PairedDevice {
        PairedDevice(
            id: row["id"], deviceId: row["deviceId"], deviceName: row["deviceName"], deviceType: row["deviceType"],
            apnsToken: row["apnsToken"], createdAt: date(row["createdAt"]),
            lastSeenAt: (row["lastSeenAt"] as Double?).map(date), isActive: row["isActive"],
            revokedAt: (row["revokedAt"] as Double?).map(date))
    }
}
