import CGStreamer

/// A pipeline's bus: messages from the elements, read by the thread that drives the pipeline.
public final class Bus: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<GstBus>

    init(taking pointer: UnsafeMutablePointer<GstBus>) {
        self.pointer = pointer
    }

    deinit {
        gst_object_unref(pointer)
    }

    /// The next message, waiting up to `timeout`; nil if none came.
    public func pop(timeout: Duration) -> Message? {
        gst_bus_timed_pop(pointer, ClockTime.from(timeout)).map(Message.init(taking:))
    }

    /// The next ERROR message, waiting up to `timeout`; other messages before it are dropped.
    public func popError(timeout: Duration) -> GStreamerFailure? {
        guard let message = gst_bus_timed_pop_filtered(pointer, ClockTime.from(timeout), GST_MESSAGE_ERROR) else {
            return nil
        }
        defer { gst_message_unref(message) }
        return GStreamerFailure(message: message)
    }

    /// The WARNING messages queued now (not waiting), oldest first; other messages stay queued.
    public func drainWarnings() -> [GStreamerFailure] {
        var warnings: [GStreamerFailure] = []
        while let message = gst_bus_pop_filtered(pointer, GST_MESSAGE_WARNING) {
            warnings.append(GStreamerFailure(message: message))
            gst_message_unref(message)
        }
        return warnings
    }

    /// Posts an application message named `name` (to wake the driving thread); dropped once the bus flushes.
    public func post(application name: String) {
        _ = gst_bus_post(pointer, gst_message_new_application(nil, gst_structure_new_empty(name)))
    }

    /// Drops every queued message and every later post.
    func setFlushing() {
        gst_bus_set_flushing(pointer, 1)
    }
}

/// One bus message, copied out of C memory.
public struct Message: Sendable {
    public enum Kind: Sendable {
        case error(GStreamerFailure)
        case warning(GStreamerFailure)
        case endOfStream
        case segmentDone
        /// An asynchronous state change (preroll) completed; `fromPipeline` when the pipeline itself posted it.
        case asyncDone(fromPipeline: Bool)
        /// An application message, by its structure's name.
        case application(String)
        case other
    }

    public let kind: Kind

    init(taking message: UnsafeMutablePointer<GstMessage>) {
        defer { gst_message_unref(message) }
        switch cgst_message_type(message) {
        case GST_MESSAGE_ERROR: kind = .error(GStreamerFailure(message: message))
        case GST_MESSAGE_WARNING: kind = .warning(GStreamerFailure(message: message))
        case GST_MESSAGE_EOS: kind = .endOfStream
        case GST_MESSAGE_SEGMENT_DONE: kind = .segmentDone
        case GST_MESSAGE_ASYNC_DONE:
            // The pipeline is the only object without a parent.
            var fromPipeline = false
            if let source = cgst_message_src(message) {
                if let parent = gst_object_get_parent(source) {
                    gst_object_unref(parent)
                } else {
                    fromPipeline = true
                }
            }
            kind = .asyncDone(fromPipeline: fromPipeline)
        case GST_MESSAGE_APPLICATION:
            if let structure = gst_message_get_structure(message) {
                kind = .application(String(cString: gst_structure_get_name(structure)))
            } else {
                kind = .other
            }
        default: kind = .other
        }
    }
}
