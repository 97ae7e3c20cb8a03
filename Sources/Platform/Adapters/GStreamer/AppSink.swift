import CGStreamer

/// What an appsink callback tells the streaming thread.
public enum FlowResult: Sendable {
    /// Carry on.
    case ok
    /// The pipeline is shutting down.
    case flushing
    /// A fatal error: the pipeline posts an ERROR.
    case error

    var gst: GstFlowReturn {
        switch self {
        case .ok: GST_FLOW_OK
        case .flushing: GST_FLOW_FLUSHING
        case .error: GST_FLOW_ERROR
        }
    }
}

/// One buffer an appsink received, valid during the callback.
public struct Sample: ~Copyable {
    fileprivate let pointer: OpaquePointer

    /// The buffer's bytes as native-endian 32-bit floats (a trailing partial sample is ignored); nil if the
    /// sample has no buffer or it cannot be read.
    public func floats() -> [Float]? {
        guard let buffer = gst_sample_get_buffer(pointer) else { return nil }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &map) }
        return Self.floats(fromNativeBytes: UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    /// The buffer's bytes (e.g. the pixels of a raw video frame, or an encoded picture); nil if the sample has no
    /// buffer or it cannot be read.
    public func bytes() -> [UInt8]? {
        guard let buffer = gst_sample_get_buffer(pointer) else { return nil }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &map) }
        return [UInt8](UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    /// The width and height in the sample's caps (raw or encoded video); nil when they are not there.
    public var videoSize: (width: Int, height: Int)? {
        guard let caps = gst_sample_get_caps(pointer), gst_caps_get_size(caps) > 0,
            let structure = gst_caps_get_structure(caps, 0)
        else { return nil }
        var width: gint = 0
        var height: gint = 0
        guard gst_structure_get_int(structure, "width", &width) != 0,
            gst_structure_get_int(structure, "height", &height) != 0, width > 0, height > 0
        else { return nil }
        return (Int(width), Int(height))
    }

    /// The buffer's presentation time on the pipeline's timeline; nil when unset.
    public var presentationTime: Duration? {
        gst_sample_get_buffer(pointer).flatMap { ClockTime.duration($0.pointee.pts) }
    }

    /// Native-endian 32-bit floats at any alignment; a trailing partial sample is ignored.
    static func floats(fromNativeBytes bytes: UnsafeRawBufferPointer) -> [Float] {
        let stride = MemoryLayout<Float>.size
        return (0..<(bytes.count / stride)).map { bytes.loadUnaligned(fromByteOffset: $0 * stride, as: Float.self) }
    }
}

extension Element {
    /// Makes this `appsink` call `onSample` on its streaming thread for every buffer (no signals, nothing
    /// dropped: bounding is the caller's business).
    ///
    /// - Parameters:
    ///   - caps: The caps to accept, in `gst-launch` form; nil for any.
    ///   - sync: Whether to render on the pipeline clock (files: real time) or as soon as buffers arrive (live).
    public func configureAppSink(
        caps: String?,
        sync: Bool,
        onSample: @escaping @Sendable (borrowing Sample) -> FlowResult
    ) {
        let appsink = cgst_app_sink(pointer)
        if let caps {
            let parsed = gst_caps_from_string(caps)
            gst_app_sink_set_caps(appsink, parsed)
            gst_caps_unref(parsed)
        }
        gst_app_sink_set_emit_signals(appsink, 0)
        gst_app_sink_set_drop(appsink, 0)
        gst_base_sink_set_sync(cgst_base_sink(pointer), sync ? 1 : 0)
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = { appsink, context in
            guard let appsink, let context else { return GST_FLOW_ERROR }
            guard let sample = gst_app_sink_pull_sample(appsink) else { return GST_FLOW_FLUSHING }
            defer { gst_sample_unref(sample) }
            return Unmanaged<SampleCallback>.fromOpaque(context).takeUnretainedValue().body(Sample(pointer: sample)).gst
        }
        gst_app_sink_set_callbacks(
            appsink,
            &callbacks,
            Unmanaged.passRetained(SampleCallback(onSample)).toOpaque(),
            { context in
                guard let context else { return }
                Unmanaged<SampleCallback>.fromOpaque(context).release()
            }
        )
    }
}

/// An appsink's callback, kept alive by GLib until the appsink is finalised.
private final class SampleCallback: @unchecked Sendable {
    let body: @Sendable (borrowing Sample) -> FlowResult

    init(_ body: @escaping @Sendable (borrowing Sample) -> FlowResult) {
        self.body = body
    }
}
