/// Errors thrown when creating a ``SoundDetector``.
public enum SoundDetectorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input sample rate is neither 16 000 nor 48 000 Hz.
    case unsupportedInputSampleRate(Int)

    /// Explains the error and lists the allowed values.
    public var description: String {
        switch self {
        case .unsupportedInputSampleRate(let rate):
            "inputSampleRate must be 16000 or 48000 Hz (got \(rate))"
        }
    }
}
