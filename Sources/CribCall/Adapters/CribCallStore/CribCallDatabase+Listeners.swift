public import CribCallProtocol
public import DeviceIdentity
public import Foundation
import GRDB

extension CribCallDatabase {
    /// Stores a listener the monitor has just paired with.
    ///
    /// Re-pairing replaces the old row: any row with the same `listenerId` and any row with the same fingerprint
    /// (a listener that came back under a new id) is deleted first, in the same transaction.
    ///
    /// - Parameters:
    ///   - listener: The listener accepted by pairing.
    ///   - date: The pairing time, stored as `createdAt`.
    /// - Returns: The stored record.
    @discardableResult
    public func trustListener(_ listener: TrustedListener, at date: Date) throws -> TrustedListenerRecord {
        let record = TrustedListenerRecord(
            listenerId: listener.listenerId,
            name: listener.name,
            publicKey: listener.publicKey,
            fingerprint: listener.fingerprint,
            createdAt: date
        )
        try writer.write { db in
            // The id stays with the certificate that paired under it: a device re-pairing replaces its own row (same
            // certificate), never another device's.
            if let holder = try TrustedListenerRecord.fetchOne(db, key: record.listenerId),
                holder.fingerprint != record.fingerprint
            {
                throw CribCallStoreError.listenerIdTaken(record.listenerId)
            }
            try TrustedListenerRecord
                .filter(
                    TrustedListenerRecord.CodingKeys.listenerId == record.listenerId
                        || TrustedListenerRecord.CodingKeys.fingerprint == record.fingerprint.hex
                )
                .deleteAll(db)
            try record.insert(db)
        }
        return record
    }

    /// Forgets a listener; its sessions must then be closed by the caller.
    ///
    /// - Returns: True if a listener with this id was trusted.
    @discardableResult
    public func revokeListener(id: String) throws -> Bool {
        try writer.write { db in
            try TrustedListenerRecord.deleteOne(db, key: id)
        }
    }

    /// All trusted listeners, oldest pairing first.
    public func trustedListeners() throws -> [TrustedListenerRecord] {
        try writer.read { db in
            try TrustedListenerRecord
                .order(TrustedListenerRecord.CodingKeys.createdAt, TrustedListenerRecord.CodingKeys.listenerId)
                .fetchAll(db)
        }
    }

    /// The trusted listener whose certificate has this fingerprint, if any.
    public func trustedListener(fingerprint: CertificateFingerprint) throws -> TrustedListenerRecord? {
        try writer.read { db in
            try TrustedListenerRecord
                .filter(TrustedListenerRecord.CodingKeys.fingerprint == fingerprint.hex)
                .fetchOne(db)
        }
    }
}
