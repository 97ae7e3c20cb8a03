package import CGStreamer

/// A GStreamer ERROR or WARNING message, copied out of C memory: what failed, where, and why.
public struct GStreamerFailure: Error, Sendable, Hashable {
    /// The GError domain of the failure.
    public enum Domain: Sendable, Hashable {
        case core, library, resource, stream, other
    }

    public var domain: Domain
    /// The domain's error code (e.g. `GST_RESOURCE_ERROR_NOT_FOUND`).
    public var code: Int32
    /// The GError message, e.g. "Could not open audio device for recording."
    public var message: String
    /// The debug text without its first line (the C source location), e.g.
    /// "Recording open error on device 'hw:9': No such file or directory"; often empty.
    public var detail: String
    /// The name of the element that posted the message.
    public var elementName: String

    /// The most specific human-readable reason: the detail if there is one, else the message, without a final ".".
    public var reason: String {
        let text = detail.isEmpty ? message : detail
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    public init(domain: Domain, code: Int32, message: String, detail: String = "", elementName: String = "") {
        self.domain = domain
        self.code = code
        self.message = message
        self.detail = detail
        self.elementName = elementName
    }

    /// Copies an ERROR or WARNING bus message (for the package's modules that still read the bus themselves).
    package init(message gstMessage: UnsafeMutablePointer<GstMessage>) {
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

    /// Whether a sink ran out of room on its device (a full disk).
    public var isOutOfSpace: Bool {
        domain == .resource && code == Int32(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue)
    }

    /// Whether a file or device could not be opened or written (permissions, a missing directory, an I/O error).
    public var isWriteFailure: Bool {
        domain == .resource
            && [GST_RESOURCE_ERROR_OPEN_WRITE, GST_RESOURCE_ERROR_OPEN_READ_WRITE, GST_RESOURCE_ERROR_WRITE]
                .map { Int32($0.rawValue) }.contains(code)
    }

    /// Whether GStreamer lacks a plugin (decoder, demuxer) for the data.
    public var isMissingPlugin: Bool {
        (domain == .core && code == Int32(GST_CORE_ERROR_MISSING_PLUGIN.rawValue))
            || (domain == .stream && code == Int32(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue))
    }
}
