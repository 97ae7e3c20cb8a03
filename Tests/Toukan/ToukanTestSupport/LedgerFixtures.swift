public import Foundation
public import ToukanCore

/// Ledger rows for tests: fixed times, ids and keys, so every run sees the same queue.
public enum LedgerFixtures {
    /// 2024-01-15T14:30:00Z, the seed's example recording.
    public static let epoch = Date(timeIntervalSince1970: 1_705_329_000)

    /// A UUID whose last byte is `number`, so rows sort and read predictably.
    public static func id(_ number: UInt8) -> UUID {
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, number))
    }

    /// A pending recording made `minutesAfterEpoch` after the epoch, with a key from its number.
    public static func pending(_ number: UInt8, minutesAfterEpoch: Double = 0) -> Recording {
        let recordedAt = epoch.addingTimeInterval(minutesAfterEpoch * 60)
        return Recording(
            id: id(number), filePath: "recordings/\(RecordingName(startedAt: recordedAt).fileName)",
            recordedAt: recordedAt, duration: 60,
            idempotencyKey: IdempotencyKey(randomBytes: [UInt8](repeating: number, count: 16)))
    }
}
