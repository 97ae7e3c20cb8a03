import Synchronization
public import ToukanCore
public import ToukanUploader

/// What upload attempts report, collected in order; and the ledger row they would leave behind.
public final class UploadReports: Sendable {
    private let events = Mutex<[UploadEvent]>([])

    public init() {}

    /// Every event so far.
    public var all: [UploadEvent] { events.withLock { $0 } }

    /// The `report` closure to hand an attempt.
    public func add(_ event: UploadEvent) { events.withLock { $0.append(event) } }

    /// Offsets the server confirmed at a tus Location, in order.
    public var storedOffsets: [Int64] {
        all.compactMap { event in
            if case .stored(let offset, let location) = event, location != nil { return offset }
            return nil
        }
    }

    /// `original` as the ledger would hold it after these attempts were interrupted: the last confirmed offset and
    /// Location (what `ToukanDatabase.recordProgress` stores), ready for the next attempt to resume.
    public func ledgerRow(_ original: Recording) throws -> Recording {
        var recording = original
        for case .stored(let offset, let location) in all {
            try recording.beginUpload(at: LedgerFixtures.epoch)
            try recording.recordProgress(offset: offset, location: location)
            try recording.recoverInterruptedUpload()
        }
        return recording
    }
}
