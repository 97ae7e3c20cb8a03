public import CribCallProtocol
import DeviceIdentity
public import Foundation
import GRDB

extension CribCallDatabase {
    /// Stores a monitor the listener has just paired with.
    ///
    /// Re-pairing replaces the old row (same `monitorId` or same fingerprint) and resets ``lastSeq(monitorId:)`` to
    /// 0, so the next `EVENTS_SINCE` asks for everything the monitor still keeps: a monitor that was reset may have
    /// restarted its sequence, and replaying a few known events is better than missing new ones.
    ///
    /// - Returns: The stored record.
    @discardableResult
    public func trustMonitor(
        _ monitor: TrustedMonitor,
        name: String,
        host: String?,
        port: Int?,
        at date: Date
    ) throws -> TrustedMonitorRecord {
        let record = TrustedMonitorRecord(
            monitorId: monitor.monitorId,
            name: name,
            fingerprint: monitor.fingerprint,
            lastKnownHost: host,
            lastKnownPort: port,
            lastSeq: 0,
            createdAt: date
        )
        try writer.write { db in
            try TrustedMonitorRecord
                .filter(
                    TrustedMonitorRecord.CodingKeys.monitorId == record.monitorId
                        || TrustedMonitorRecord.CodingKeys.fingerprint == record.fingerprint.hex
                )
                .deleteAll(db)
            try record.insert(db)
        }
        return record
    }

    /// Forgets a monitor.
    ///
    /// - Returns: True if a monitor with this id was trusted.
    @discardableResult
    public func forgetMonitor(id: String) throws -> Bool {
        try writer.write { db in
            try TrustedMonitorRecord.deleteOne(db, key: id)
        }
    }

    /// All trusted monitors, oldest pairing first.
    public func trustedMonitors() throws -> [TrustedMonitorRecord] {
        try writer.read { db in
            try TrustedMonitorRecord
                .order(TrustedMonitorRecord.CodingKeys.createdAt, TrustedMonitorRecord.CodingKeys.monitorId)
                .fetchAll(db)
        }
    }

    /// Records where a monitor was last reached (e.g. after mDNS discovery).
    ///
    /// - Throws: ``CribCallStoreError/unknownMonitor(id:)`` if no monitor has this id.
    public func updateMonitorAddress(id: String, host: String?, port: Int?) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE trustedMonitor SET lastKnownHost = ?, lastKnownPort = ? WHERE monitorId = ?",
                arguments: [host, port, id]
            )
            guard db.changesCount > 0 else { throw CribCallStoreError.unknownMonitor(id: id) }
        }
    }

    /// Records that an event with this `seq` arrived; the stored value only grows (the maximum is kept), so
    /// replayed or reordered events never move it back.
    ///
    /// - Throws: ``CribCallStoreError/unknownMonitor(id:)`` if no monitor has this id.
    public func recordReceived(seq: Int64, from monitorId: String) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE trustedMonitor SET lastSeq = MAX(lastSeq, ?) WHERE monitorId = ?",
                arguments: [seq, monitorId]
            )
            guard db.changesCount > 0 else { throw CribCallStoreError.unknownMonitor(id: monitorId) }
        }
    }

    /// The highest `seq` received from a monitor (0 when none yet): the `afterSeq` of the next `EVENTS_SINCE`.
    ///
    /// - Throws: ``CribCallStoreError/unknownMonitor(id:)`` if no monitor has this id.
    public func lastSeq(monitorId: String) throws -> Int64 {
        let value = try writer.read { db in
            try Int64.fetchOne(
                db, sql: "SELECT lastSeq FROM trustedMonitor WHERE monitorId = ?", arguments: [monitorId]
            )
        }
        guard let value else { throw CribCallStoreError.unknownMonitor(id: monitorId) }
        return value
    }
}
