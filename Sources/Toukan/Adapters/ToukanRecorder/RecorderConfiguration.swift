public import Foundation

/// Tunables of a ``ToukanRecorder``. The defaults are the product's: AAC-LC 64 kbps mono 44.1 kHz, 500 ms
/// fragments written with O_SYNC, five levels a second.
public struct RecorderConfiguration: Sendable, Hashable {
    /// The encoded sample rate, in hertz.
    public var sampleRate = 44_100
    /// The AAC bit rate, in bits per second.
    public var bitrate = 64_000
    /// How much audio each MP4 fragment holds: at most this is lost when the process or the machine dies.
    public var fragmentDuration: Duration = .milliseconds(500)
    /// Open the file with O_SYNC, so a written fragment is on the disk (a power cut loses at most one fragment).
    public var durableWrites = true
    /// How much audio each ``AudioLevel`` measures (default 200 ms: 5 levels a second).
    public var levelInterval: Duration = .milliseconds(200)
    /// How often a lost input is tried again.
    public var retryInterval: Duration = .seconds(1)
    /// How long ``ToukanRecorder/start()`` waits for the input's first audio.
    public var startTimeout: Duration = .seconds(20)
    /// Where `test:tone` and `test:speech` are rendered once (default: a folder in the temporary directory).
    public var signalDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("toukan-test-signals")

    /// The defaults.
    public static let `default` = RecorderConfiguration()

    public init() {}
}
