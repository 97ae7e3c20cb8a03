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
        /// An element's own message (e.g. `facedetect`'s faces), its structure copied out.
        case element(source: String, Structure)
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
        case GST_MESSAGE_ELEMENT:
            if let structure = gst_message_get_structure(message) {
                kind = .element(source: String(cString: cgst_message_src_name(message)), Structure(copying: structure))
            } else {
                kind = .other
            }
        default: kind = .other
        }
    }
}

/// A GstStructure copied out of C memory: its name and fields, with the value types element messages use.
public struct Structure: Sendable, Hashable {
    /// A field's value.
    public indirect enum Value: Sendable, Hashable {
        case integer(Int64)
        case unsigned(UInt64)
        case double(Double)
        case bool(Bool)
        case string(String)
        /// A GstValueList (`{ … }`), e.g. facedetect's `faces` (empty lists come typed as integers).
        case list([Value])
        case structure(Structure)
        /// A type this copy does not read.
        case unsupported

        /// The value as an integer, when it is one (signed or unsigned within `Int`).
        public var integer: Int? {
            switch self {
            case .integer(let value): Int(exactly: value)
            case .unsigned(let value): Int(exactly: value)
            default: nil
            }
        }
    }

    public let name: String
    public let fields: [String: Value]

    public init(name: String, fields: [String: Value]) {
        self.name = name
        self.fields = fields
    }

    public subscript(field: String) -> Value? { fields[field] }

    /// At most this deep (a list in a structure in a list …), and this many list entries, are copied.
    static let maximumDepth = 4
    static let maximumListEntries = 64

    init(copying structure: UnsafePointer<GstStructure>, depth: Int = 0) {
        name = String(cString: gst_structure_get_name(structure))
        var fields: [String: Value] = [:]
        for index in 0..<max(0, Int(gst_structure_n_fields(structure))) {
            guard let fieldName = gst_structure_nth_field_name(structure, guint(index)),
                let value = gst_structure_get_value(structure, fieldName)
            else { continue }
            fields[String(cString: fieldName)] = Self.copy(value, depth: depth)
        }
        self.fields = fields
    }

    private static func copy(_ value: UnsafePointer<GValue>, depth: Int) -> Value {
        if cgst_value_holds_int(value) != 0 { return .integer(Int64(g_value_get_int(value))) }
        if cgst_value_holds_uint(value) != 0 { return .unsigned(UInt64(g_value_get_uint(value))) }
        if cgst_value_holds_int64(value) != 0 { return .integer(Int64(g_value_get_int64(value))) }
        if cgst_value_holds_uint64(value) != 0 { return .unsigned(UInt64(g_value_get_uint64(value))) }
        if cgst_value_holds_double(value) != 0 { return .double(g_value_get_double(value)) }
        if cgst_value_holds_boolean(value) != 0 { return .bool(g_value_get_boolean(value) != 0) }
        if cgst_value_holds_string(value) != 0 {
            return .string(g_value_get_string(value).map { String(cString: $0) } ?? "")
        }
        guard depth < maximumDepth else { return .unsupported }
        if cgst_value_holds_structure(value) != 0, let nested = gst_value_get_structure(value) {
            return .structure(Structure(copying: nested, depth: depth + 1))
        }
        if cgst_value_holds_list(value) != 0 {
            let count = min(Int(gst_value_list_get_size(value)), maximumListEntries)
            return .list(
                (0..<count).compactMap { index in
                    gst_value_list_get_value(value, guint(index)).map { copy($0, depth: depth + 1) }
                })
        }
        return .unsupported
    }
}
