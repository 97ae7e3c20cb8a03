public import Foundation
public import ToukanCore

/// The loudness of the last stretch of audio, for a live meter.
public struct AudioLevel: Sendable, Hashable {
    /// The quietest level reported: digital silence reads as this.
    public static let floorDecibels: Double = -90

    /// The largest sample magnitude, in dBFS (0 is full scale).
    public var peakDecibels: Double
    /// The root mean square, in dBFS (a full-scale sine reads −3).
    public var rmsDecibels: Double
    /// The position in the recording at the end of the stretch measured.
    public var position: Duration

    public init(peakDecibels: Double, rmsDecibels: Double, position: Duration) {
        self.peakDecibels = peakDecibels
        self.rmsDecibels = rmsDecibels
        self.position = position
    }
}

/// A finished recording.
public struct RecordingSummary: Sendable, Hashable {
    /// The finalised .m4a file.
    public var file: URL
    /// The audio in it.
    public var duration: Duration
    /// Where the input was lost, in order.
    public var gaps: [Gap]

    public init(file: URL, duration: Duration, gaps: [Gap]) {
        self.file = file
        self.duration = duration
        self.gaps = gaps
    }
}

/// What happens to a recording, in order, for the service above (which records gap markers in its ledger).
public enum RecorderEvent: Sendable, Hashable {
    /// The first audio was written to the file.
    case started(file: URL)
    /// The input was lost: the recording holds `at` of audio; the recorder keeps trying to reopen the input.
    case paused(at: Duration, reason: String)
    /// The input delivers audio again, into the same file, right after the audio before the gap.
    case resumed(Gap)
    /// The recording ended early (disk full, file unwritable): the file holds what was written; recover it.
    case failed(RecorderError)
    /// The recording was stopped and its file finalised.
    case finished(RecordingSummary)
}
