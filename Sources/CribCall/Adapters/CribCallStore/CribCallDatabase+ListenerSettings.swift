import GRDB

extension CribCallDatabase {
    /// The `setting` key of ``listenerOnNoise()``. The `setting` table is a key–value table, so this listener setting
    /// needs no migration.
    static let onNoiseKey = "onNoise"

    /// The listener's action on a noise event; ``OnNoiseAction/notify`` until set.
    ///
    /// - Throws: ``CribCallStoreError/corruptSetting(key:value:)`` if the stored value is not an ``OnNoiseAction``.
    public func listenerOnNoise() throws -> OnNoiseAction {
        try writer.read { db in
            guard let record = try SettingRecord.fetchOne(db, key: Self.onNoiseKey) else { return .notify }
            guard let action = OnNoiseAction(rawValue: record.value) else {
                throw CribCallStoreError.corruptSetting(key: record.key, value: record.value)
            }
            return action
        }
    }

    /// Sets the listener's action on a noise event (seed FR7.2); a running listener applies it from the next event.
    /// - Parameter action: Notify only, or open the monitor's automatic stream.
    public func setListenerOnNoise(_ action: OnNoiseAction) throws {
        try writer.write { db in
            try SettingRecord(key: Self.onNoiseKey, value: action.rawValue).save(db)
        }
    }
}
