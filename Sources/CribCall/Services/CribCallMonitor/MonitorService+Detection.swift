public import AudioCapture
import CribCallStore
import SoundDetection

extension MonitorService {
    /// Listens to `input` with the settings in force (they may change while it runs) and reports each noise to the
    /// paired listeners, until the input fails or the task is cancelled.
    ///
    /// - Returns: Why detection stopped, for the user; nil when it was cancelled. Without audio the monitor would
    ///   watch over nothing, so the caller should stop rather than look alive.
    public nonisolated func detectSound(from input: any AudioInput) async -> String? {
        do {
            try await DetectionLoop.run(
                input: input,
                configuration: { await self.detectorConfiguration },
                report: { await self.heard($0) },
                hear: { await self.hearCrying($0) }
            )
            return nil
        } catch is CancellationError {
            return nil
        } catch let error as AudioCaptureError {
            return "audio stopped: \(error.message)"
        } catch {
            return "sound detection stopped: \(error)"
        }
    }

    /// A noise the detection heard: reported, unless monitoring is switched off.
    func heard(_ detection: NoiseDetection) {
        guard settings.monitoring else { return }
        _ = try? reportNoise(detection)
    }
}
