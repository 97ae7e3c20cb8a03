/// What the monitor streams automatically when it detects noise.
public enum AutoStreamMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// No automatic stream: listeners only get the noise event.
    case none
    /// An audio-only stream.
    case audio
    /// An audio and video stream.
    case audioVideo = "audio_video"
}
