public import CribCallProtocol

extension MediaType {
    /// How the monitor's terminal output names the media: "audio", or "audio and video".
    public var displayName: String {
        switch self {
        case .audio: "audio"
        case .audioVideo: "audio and video"
        }
    }
}
