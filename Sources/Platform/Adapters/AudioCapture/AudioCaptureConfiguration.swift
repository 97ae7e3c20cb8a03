/// Tunables of a ``GStreamerAudioCapture``.
public struct AudioCaptureConfiguration: Sendable, Hashable {
    /// Samples per delivered chunk at 16 kHz. Default 1600 (100 ms); at least 1.
    public var chunkSize: Int
    /// Chunks held for a slow consumer before the oldest is dropped (and counted in
    /// ``GStreamerAudioCapture/droppedChunkCount``). Default 50 (5 s of audio); at least 1.
    public var maxBufferedChunks: Int

    /// The defaults: 100 ms chunks, up to 5 s buffered.
    public static let `default` = AudioCaptureConfiguration()

    /// Creates a configuration; values below 1 are raised to 1.
    ///
    /// - Parameters:
    ///   - chunkSize: Samples per chunk at 16 kHz.
    ///   - maxBufferedChunks: Chunks buffered for a slow consumer before the oldest is dropped.
    public init(chunkSize: Int = 1_600, maxBufferedChunks: Int = 50) {
        self.chunkSize = max(1, chunkSize)
        self.maxBufferedChunks = max(1, maxBufferedChunks)
    }
}
