public import SoundDetection

/// Runs sound detection in real time on a test source (PROTOCOL.md §8), for the monitor without a microphone and
/// for demos and end-to-end tests. Audio capture through GStreamer feeds the same detector (media capability).
public enum DetectionLoop {
    /// Generates audio in 100 ms chunks paced by the clock, detects noise, and reports each detection.
    /// Returns when the task is cancelled.
    /// - Parameters:
    ///   - source: The test signal.
    ///   - configuration: Detection settings (threshold, minimum duration, cooldown).
    ///   - report: Called with every detection, in order.
    public static func run(
        source: TestAudioSource,
        configuration: SoundDetectorConfiguration,
        report: @Sendable (NoiseDetection) async -> Void
    ) async throws {
        var source = source
        var detector = try SoundDetector(configuration: configuration, inputSampleRate: TestAudioSource.sampleRate)
        let chunk = TestAudioSource.sampleRate / 10
        let clock = ContinuousClock()
        var deadline = clock.now
        while !Task.isCancelled {
            for detection in detector.process(source.next(chunk)) {
                await report(detection)
            }
            deadline += .milliseconds(100)
            try await clock.sleep(until: deadline)
        }
    }
}
