import CGStreamer

/// What a pad probe watches.
public enum ProbeKind: Sendable {
    /// Buffers flowing through the pad.
    case buffers
    /// Events flowing downstream (caps, EOS, …).
    case downstreamEvents
    /// Both.
    case buffersAndDownstreamEvents
    /// Blocks the pad's data flow for as long as the probe stays.
    case blockDownstream

    var gst: GstPadProbeType {
        switch self {
        case .buffers: GST_PAD_PROBE_TYPE_BUFFER
        case .downstreamEvents: GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM
        case .buffersAndDownstreamEvents:
            GstPadProbeType(GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue)
        case .blockDownstream: GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM
        }
    }
}

/// What the probe tells the pad.
public enum ProbeResult: Sendable {
    /// Let the data pass; keep probing.
    case pass
    /// Drop this buffer or event; keep probing.
    case drop
    /// Let the data pass and remove the probe.
    case remove

    var gst: GstPadProbeReturn {
        switch self {
        case .pass: GST_PAD_PROBE_OK
        case .drop: GST_PAD_PROBE_DROP
        case .remove: GST_PAD_PROBE_REMOVE
        }
    }
}

/// The buffer or event a probe sees, valid during the probe's call only.
public struct ProbeData: ~Copyable {
    private let info: UnsafeMutablePointer<GstPadProbeInfo>

    fileprivate init(_ info: UnsafeMutablePointer<GstPadProbeInfo>) {
        self.info = info
    }

    private var buffer: UnsafeMutablePointer<GstBuffer>? {
        guard info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 else { return nil }
        return info.pointee.data?.assumingMemoryBound(to: GstBuffer.self)
    }

    private var event: UnsafeMutablePointer<GstEvent>? {
        guard info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue != 0 else { return nil }
        return info.pointee.data?.assumingMemoryBound(to: GstEvent.self)
    }

    /// Whether this is a buffer.
    public var isBuffer: Bool { buffer != nil }

    /// A copy of the buffer's first `count` bytes (fewer if it is shorter); nil for an event.
    public func bufferPrefix(_ count: Int) -> [UInt8]? {
        guard let buffer else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let copied = bytes.withUnsafeMutableBytes { gst_buffer_extract(buffer, 0, $0.baseAddress, gsize(count)) }
        return Array(bytes.prefix(Int(copied)))
    }

    /// A copy of the whole buffer; nil for an event or a buffer that cannot be read.
    public func bufferBytes() -> [UInt8]? {
        guard let buffer else { return nil }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &map) }
        guard let data = map.data else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(map.size)))
    }

    /// The buffer's presentation time; nil for an event or an unstamped buffer.
    public var presentationTime: Duration? {
        buffer.flatMap { ClockTime.duration($0.pointee.pts) }
    }

    /// The buffer's duration; nil for an event or a buffer without one.
    public var duration: Duration? {
        buffer.flatMap { ClockTime.duration($0.pointee.duration) }
    }

    /// Whether this is an end-of-stream event.
    public var isEndOfStream: Bool { event?.pointee.type == GST_EVENT_EOS }

    /// For a caps event, an integer field of the caps (e.g. a decoder's "width").
    public func capsInt(_ field: String) -> Int? {
        guard let event, event.pointee.type == GST_EVENT_CAPS else { return nil }
        var caps: UnsafeMutablePointer<GstCaps>?
        gst_event_parse_caps(event, &caps)
        var value: gint = 0
        guard let caps, gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            gst_structure_get_int(structure, field, &value) != 0
        else { return nil }
        return Int(value)
    }
}

extension Pad {
    /// Calls `body` on the streaming thread for what `kind` watches. The closure is released when the probe is
    /// removed or the pad finalised.
    public func addProbe(_ kind: ProbeKind, _ body: @escaping @Sendable (borrowing ProbeData) -> ProbeResult) {
        gst_pad_add_probe(
            pointer,
            kind.gst,
            { _, info, context in
                guard let info, let context else { return GST_PAD_PROBE_OK }
                return Unmanaged<ProbeCallback>.fromOpaque(context).takeUnretainedValue().body(ProbeData(info)).gst
            },
            Unmanaged.passRetained(ProbeCallback(body)).toOpaque(),
            { context in
                guard let context else { return }
                Unmanaged<ProbeCallback>.fromOpaque(context).release()
            }
        )
    }
}

/// A probe's closure, kept alive by GStreamer until the probe goes.
private final class ProbeCallback: Sendable {
    let body: @Sendable (borrowing ProbeData) -> ProbeResult

    init(_ body: @escaping @Sendable (borrowing ProbeData) -> ProbeResult) {
        self.body = body
    }
}
