public import AudioCapture
public import SoundDetection

/// Runs sound detection on a live audio input — a GStreamer capture, or the built-in test signals of
/// PROTOCOL.md §8 — with settings that can change while it runs.
public enum DetectionLoop {
    /// Detects noise in `input`'s 16 kHz chunks and reports each detection, until the input ends (normally or
    /// with its error) or the task is cancelled.
    ///
    /// - Parameters:
    ///   - input: The audio; it is stopped when the loop ends.
    ///   - configuration: The current detection settings, asked before every chunk (cheap); when they change,
    ///     detection restarts with them, so `cribcall settings set threshold=…` takes effect within 100 ms.
    ///   - report: Called with every detection, in order.
    ///   - hear: Called with every chunk too (the cry detector listens to the same audio).
    /// - Throws: The input's failure, e.g. `AudioCaptureError` when the microphone goes away.
    public static func run(
        input: any AudioInput,
        configuration: @Sendable () async -> SoundDetectorConfiguration,
        report: @Sendable (NoiseDetection) async -> Void,
        hear: @Sendable ([Float]) async -> Void = { _ in }
    ) async throws {
        var current = await configuration()
        var detector = try SoundDetector(configuration: current, inputSampleRate: TestAudioSource.sampleRate)
        do {
            for try await chunk in input.chunks() {
                let latest = await configuration()
                if latest != current {
                    current = latest
                    detector = try SoundDetector(configuration: latest, inputSampleRate: TestAudioSource.sampleRate)
                }
                for detection in detector.process(chunk) {
                    await report(detection)
                }
                await hear(chunk)
            }
        } catch {
            await input.stop()
            throw error
        }
        await input.stop()
    }
}
