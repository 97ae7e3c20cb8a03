public import AudioCapture

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
                report: { _ = try? await self.reportNoise($0) },
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
}
