import CGStreamer

/// A GStreamer error message, copied out of C memory.
struct GStreamerFailure: Sendable, Hashable {
    /// The GError domain of the failure.
    enum Domain: Sendable, Hashable {
        case core, library, resource, stream, other
    }

    var domain: Domain
    /// The domain's error code (e.g. `GST_RESOURCE_ERROR_NOT_FOUND`).
    var code: Int32
    /// The GError message, e.g. "Could not open audio device for recording."
    var message: String
    /// The debug text without its first line (the C source location), e.g.
    /// "Recording open error on device 'hw:9': No such file or directory"; often empty.
    var detail: String
    /// The name of the element that posted the message.
    var elementName: String

    /// The most specific human-readable reason: the detail if there is one, else the message, without a final ".".
    var reason: String {
        let text = detail.isEmpty ? message : detail
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    init(domain: Domain, code: Int32, message: String, detail: String = "", elementName: String = "") {
        self.domain = domain
        self.code = code
        self.message = message
        self.detail = detail
        self.elementName = elementName
    }

    /// Copies an ERROR or WARNING bus message.
    init(message gstMessage: UnsafeMutablePointer<GstMessage>) {
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        if cgst_message_type(gstMessage) == GST_MESSAGE_WARNING {
            gst_message_parse_warning(gstMessage, &error, &debug)
        } else {
            gst_message_parse_error(gstMessage, &error, &debug)
        }
        defer {
            g_clear_error(&error)
            g_free(debug)
        }
        let quark = error?.pointee.domain ?? 0
        let domain: Domain =
            switch quark {
            case gst_core_error_quark(): .core
            case gst_library_error_quark(): .library
            case gst_resource_error_quark(): .resource
            case gst_stream_error_quark(): .stream
            default: .other
            }
        let debugLines = debug.map { String(cString: $0) }?.split(separator: "\n") ?? []
        self.init(
            domain: domain,
            code: error?.pointee.code ?? 0,
            message: error.map { String(cString: $0.pointee.message) } ?? "unknown GStreamer error",
            detail: debugLines.dropFirst().joined(separator: " "),
            elementName: String(cString: cgst_message_src_name(gstMessage))
        )
    }

    /// Whether GStreamer lacks a plugin (decoder, demuxer) for the data.
    var isMissingPlugin: Bool {
        (domain == .core && code == Int32(GST_CORE_ERROR_MISSING_PLUGIN.rawValue))
            || (domain == .stream && code == Int32(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue))
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
