import CGStreamer

/// A pad (holds a reference of its own).
public final class Pad: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GstPad>

    init(taking pointer: UnsafeMutablePointer<GstPad>) {
        self.pointer = pointer
    }

    convenience init(borrowing pointer: UnsafeMutablePointer<GstPad>) {
        gst_object_ref(UnsafeMutableRawPointer(pointer))
        self.init(taking: pointer)
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(pointer))
    }

    /// Whether data leaves the element through this pad.
    public var isSource: Bool { gst_pad_get_direction(pointer) == GST_PAD_SRC }

    /// The pad this one is linked to.
    public var peer: Pad? { gst_pad_get_peer(pointer).map(Pad.init(taking:)) }

    /// Whether the pad is linked to a peer.
    public var isLinked: Bool { gst_pad_is_linked(pointer) != 0 }

    /// Links this (source) pad to `sink`; false if GStreamer refuses (incompatible caps, already linked).
    public func link(to sink: Pad) -> Bool {
        gst_pad_link(pointer, sink.pointer) == GST_PAD_LINK_OK
    }

    /// The media type of the pad's caps ("audio/x-raw", "application/x-rtp", …): its current caps, else what it
    /// can produce; nil if it has none.
    public var mediaType: String? {
        withCapsStructure(currentOnly: false) { String(cString: gst_structure_get_name($0)) }
    }

    /// A string field of the pad's caps (current, else queryable), e.g. an RTP pad's "media" or "encoding-name".
    public func capsString(_ field: String) -> String? {
        withCapsStructure(currentOnly: false) { structure in
            gst_structure_get_string(structure, field).map { String(cString: $0) }
        }
    }

    /// An integer field of the pad's caps (current, else queryable), e.g. an RTP pad's "payload".
    public func capsInt(_ field: String) -> Int? {
        withCapsStructure(currentOnly: false) { structure in
            var value: gint = 0
            return gst_structure_get_int(structure, field, &value) != 0 ? Int(value) : nil
        }
    }

    /// An unsigned field of the caps the pad has negotiated (nil before), e.g. an RTP pad's "ssrc".
    public func currentCapsUInt(_ field: String) -> UInt32? {
        withCapsStructure(currentOnly: true) { structure in
            var value: guint = 0
            return gst_structure_get_uint(structure, field, &value) != 0 ? UInt32(value) : nil
        }
    }

    /// Sends an end-of-stream event into the pad; false if it was not handled.
    @discardableResult
    public func sendEndOfStream() -> Bool {
        gst_pad_send_event(pointer, gst_event_new_eos()) != 0
    }

    private func withCapsStructure<Result>(
        currentOnly: Bool,
        _ body: (UnsafePointer<GstStructure>) -> Result?
    ) -> Result? {
        let caps =
            currentOnly
            ? gst_pad_get_current_caps(pointer) : gst_pad_get_current_caps(pointer) ?? gst_pad_query_caps(pointer, nil)
        guard let caps else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0) else { return nil }
        return body(structure)
    }
}
