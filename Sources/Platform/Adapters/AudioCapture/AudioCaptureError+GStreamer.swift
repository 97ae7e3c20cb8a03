import GStreamer

extension AudioCaptureError {
    /// GStreamer that does not initialise, elements that are not installed, a pipeline it cannot assemble.
    init(_ error: GStreamerError) {
        switch error.code {
        case .unavailable: self.init(code: .gstreamerUnavailable, message: error.message)
        case .missingElements: self.init(code: .missingPlugin, message: error.message)
        default: self.init(code: .pipelineFailed, message: error.message)
        }
    }
}

extension AudioCaptureError {
    /// Translates a pipeline error into what the user should do, for the source being captured.
    init(_ failure: GStreamerFailure, source: AudioSourceSpec) {
        let reason = failure.reason
        switch source {
        case .file(let path) where failure.isMissingPlugin:
            self.init(
                code: .missingPlugin,
                message: "no installed GStreamer plugin decodes '\(path)' (\(reason)): install "
                    + "gstreamer1.0-plugins-good and gstreamer1.0-libav, or convert the file to WAV or FLAC"
            )
        case .file(let path) where failure.domain == .resource:
            self.init(
                code: .fileUnreadable,
                message: "cannot read audio file '\(path)' (\(reason)): "
                    + "check the path given to --audio-source file:PATH"
            )
        case .file(let path) where failure.domain == .stream:
            self = .undecodable(path: path, reason: reason)
        case .alsa(let device) where failure.domain == .resource:
            self.init(
                code: .deviceUnavailable,
                message: "cannot open ALSA capture device '\(device ?? "default")' (\(reason)): list capture devices "
                    + "with `arecord -l` and pass one as --audio-source alsa:hw:CARD,DEVICE, or use pulse or file:PATH"
            )
        case .pulse where failure.domain == .resource && reason.hasPrefix("Disconnected:"):
            // The server went away under a running capture: not a wrong device, nothing for the user to fix here.
            self.init(
                code: .deviceUnavailable,
                message: "the PulseAudio server stopped while recording (\(reason)): it was restarted or crashed"
            )
        case .pulse(let device?) where failure.domain == .resource && !reason.hasPrefix("Failed to connect:"):
            self.init(
                code: .deviceUnavailable,
                message: "PulseAudio cannot record from '\(device)' (\(reason)): list inputs with "
                    + "`pactl list short sources`, or use plain --audio-source pulse for the default input"
            )
        case .pulse where failure.domain == .resource:
            self.init(
                code: .deviceUnavailable,
                message: "cannot record from PulseAudio (\(reason)): is PulseAudio (or PipeWire's pulse server) "
                    + "running for this user? Start it, or try --audio-source alsa:hw:0 or file:PATH"
            )
        case .auto where failure.domain == .resource:
            self = .noInputDevice(reasons: [reason])
        default:
            self.init(
                code: failure.isMissingPlugin ? .missingPlugin : .pipelineFailed,
                message: "audio capture from \(source) failed (\(failure.message) \(failure.detail)): "
                    + "check the source, or run with GST_DEBUG=3 for GStreamer's log"
            )
        }
    }

    /// `auto` found nothing to record from.
    static func noInputDevice(reasons: [String]) -> AudioCaptureError {
        let because = reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
        return AudioCaptureError(
            code: .noInputDevice,
            message: "no audio input found\(because): is PulseAudio running? "
                + "Try --audio-source alsa:hw:0 or file:PATH"
        )
    }

    /// A file GStreamer cannot decode.
    static func undecodable(path: String, reason: String) -> AudioCaptureError {
        AudioCaptureError(
            code: .unsupportedFormat,
            message: "'\(path)' is not an audio file GStreamer can decode (\(reason)): "
                + "use a WAV, FLAC, Ogg Vorbis/Opus or MP3 file"
        )
    }

    /// A live input that ended.
    static func inputEnded(_ source: AudioSourceSpec) -> AudioCaptureError {
        AudioCaptureError(
            code: .inputEnded,
            message: "the audio input \(source) stopped delivering audio: check the device "
                + "(was it unplugged?), then restart the monitor"
        )
    }
}
