import CGStreamer
import Synchronization

/// A GstPipeline and the elements in it.
///
/// The pipeline owns its elements; ``Element`` values are handles that stay valid until ``tearDown()``. Callbacks
/// installed on elements (``Element/onPadAdded(_:)``, ``AppSink``) are released by GLib when their element is
/// finalised, which ``tearDown()`` causes: a callback that captures its owner therefore lives exactly as long as
/// the pipeline runs, never longer.
///
/// Threads: build on one thread (the pipeline is in NULL, nothing runs), then drive states and the bus from one
/// thread; ``bus`` may be posted to from any thread, also after the teardown.
public final class Pipeline: @unchecked Sendable {
    /// GStreamer's states, in order.
    public enum State: Sendable {
        case null, ready, paused, playing

        var gst: GstState {
            switch self {
            case .null: GST_STATE_NULL
            case .ready: GST_STATE_READY
            case .paused: GST_STATE_PAUSED
            case .playing: GST_STATE_PLAYING
            }
        }
    }

    private let pointer: UnsafeMutablePointer<GstElement>
    private let tornDown = Atomic<Bool>(false)
    /// The pipeline's bus; it outlives the teardown, so posting to it is always safe.
    public let bus: Bus

    /// Creates an empty pipeline (GStreamer is initialised first).
    ///
    /// - Throws: ``GStreamerError`` if GStreamer is unavailable or refuses to create a pipeline.
    public init(name: String) throws(GStreamerError) {
        try GStreamer.initialize()
        guard let pipeline = gst_pipeline_new(name) else {
            throw GStreamerError(code: .pipeline, message: "GStreamer could not create a pipeline")
        }
        pointer = pipeline
        bus = Bus(taking: gst_element_get_bus(pipeline))
    }

    deinit {
        if !tornDown.load(ordering: .acquiring) { gst_object_unref(pointer) }
    }

    /// The pipeline as an element (to compare with a message's source).
    public var element: Element { Element(pointer) }

    /// Creates an element from `factory` inside the pipeline.
    ///
    /// - Throws: ``GStreamerError/Code/missingElements`` if the factory is not installed.
    @discardableResult
    public func make(_ factory: String, name: String) throws(GStreamerError) -> Element {
        guard let element = gst_element_factory_make(factory, name) else {
            throw GStreamerError(MissingElements([factory]))
        }
        guard gst_bin_add(cgst_bin(pointer), element) != 0 else {
            throw GStreamerError(code: .pipeline, message: "GStreamer could not add \(factory)")
        }
        return Element(element)
    }

    /// Links `from`'s source pad to `to`'s sink pad.
    public func link(_ from: Element, _ to: Element) throws(GStreamerError) {
        guard gst_element_link(from.pointer, to.pointer) != 0 else {
            throw GStreamerError(code: .pipeline, message: "GStreamer could not link \(from.name) to \(to.name)")
        }
    }

    /// Links each element to the next.
    public func link(_ chain: [Element]) throws(GStreamerError) {
        for (from, to) in zip(chain, chain.dropFirst()) { try link(from, to) }
    }

    /// Asks for `state`; false if the change failed at once (the reason is an ERROR message on the bus).
    @discardableResult
    public func setState(_ state: State) -> Bool {
        gst_element_set_state(pointer, state.gst) != GST_STATE_CHANGE_FAILURE
    }

    /// Seeks to the start. A `segment` seek plays to the end and posts SEGMENT_DONE instead of EOS, so a
    /// non-flushing segment seek on SEGMENT_DONE loops without a gap.
    public func seekToStart(flushing: Bool, segment: Bool = true) -> Bool {
        var flags: UInt32 = 0
        if segment { flags |= GST_SEEK_FLAG_SEGMENT.rawValue }
        if flushing { flags |= GST_SEEK_FLAG_FLUSH.rawValue }
        return gst_element_seek(
            pointer, 1.0, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags), GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_NONE, 0
        ) != 0
    }

    /// Calls `body` once the GstPipeline object is finalised (every element released); for leak checks.
    public func onFinalized(_ body: @escaping @Sendable () -> Void) {
        g_object_weak_ref(
            UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GObject.self),
            { context, _ in
                guard let context else { return }
                Unmanaged<Callback<Void>>.fromOpaque(context).takeRetainedValue().body(())
            },
            Unmanaged.passRetained(Callback<Void>(body)).toOpaque()
        )
    }

    /// Sets NULL, drops what is queued on the bus (messages reference elements, whose callbacks may retain their
    /// owner) and flushes later posts, then releases the pipeline: every element and callback is finalised.
    /// Idempotent; nothing may use the pipeline's elements afterwards.
    public func tearDown() {
        guard !tornDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        gst_element_set_state(pointer, GST_STATE_NULL)
        bus.setFlushing()
        gst_object_unref(pointer)
    }
}

/// A closure kept alive by GLib (released by its destroy notify).
final class Callback<Argument>: @unchecked Sendable {
    let body: @Sendable (Argument) -> Void

    init(_ body: @escaping @Sendable (Argument) -> Void) {
        self.body = body
    }
}

/// GLib's destroy notify for a signal handler's data: releases the retain taken when the handler was connected.
private let releaseCallback: GClosureNotify = { context, _ in
    guard let context else { return }
    Unmanaged<AnyObject>.fromOpaque(context).release()
}

/// An element of a ``Pipeline`` (a handle: the pipeline owns the element).
public struct Element: @unchecked Sendable, Equatable {
    let pointer: UnsafeMutablePointer<GstElement>

    init(_ pointer: UnsafeMutablePointer<GstElement>) {
        self.pointer = pointer
    }

    /// The element's name.
    public var name: String { String(cString: cgst_object_name(pointer)) }

    /// Sets a string property.
    public func set(_ property: String, _ value: String) {
        cgst_object_set_string(pointer, property, value)
    }

    /// Sets a Boolean property.
    public func set(_ property: String, _ value: Bool) {
        cgst_object_set_bool(pointer, property, value ? 1 : 0)
    }

    /// Sets an integer property (`gint`).
    public func set(_ property: String, _ value: Int32) {
        cgst_object_set_int(pointer, property, value)
    }

    /// Sets a property from its text form as `gst-launch` reads it (caps, enums by nick, …).
    public func set(_ property: String, parsing text: String) {
        gst_util_set_object_arg(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GObject.self), property, text)
    }

    /// Whether this bin holds an element named `name` (at any depth).
    public func containsChild(named name: String) -> Bool {
        guard let child = gst_bin_get_by_name(cgst_bin(pointer), name) else { return false }
        gst_object_unref(child)
        return true
    }

    /// The static pad `name` (e.g. "sink").
    public func staticPad(_ name: String) -> Pad? {
        gst_element_get_static_pad(pointer, name).map(Pad.init(taking:))
    }

    /// Calls `body` on a streaming thread for each pad the element adds (decodebin's `pad-added`).
    public func onPadAdded(_ body: @escaping @Sendable (Pad) -> Void) {
        let handler:
            @convention(c) (
                UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
            ) -> Void = { _, pad, context in
                guard let pad, let context else { return }
                Unmanaged<Callback<Pad>>.fromOpaque(context).takeUnretainedValue().body(Pad(borrowing: pad))
            }
        connect("pad-added", unsafeBitCast(handler, to: GCallback.self), Callback(body))
    }

    /// Calls `body` once the element has added all its pads (decodebin's `no-more-pads`).
    public func onNoMorePads(_ body: @escaping @Sendable () -> Void) {
        let handler: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, context in
            guard let context else { return }
            Unmanaged<Callback<Void>>.fromOpaque(context).takeUnretainedValue().body(())
        }
        connect("no-more-pads", unsafeBitCast(handler, to: GCallback.self), Callback<Void> { _ in body() })
    }

    private func connect<Argument>(_ signal: String, _ handler: GCallback, _ callback: Callback<Argument>) {
        cgst_signal_connect(
            pointer, signal, handler, Unmanaged.passRetained(callback).toOpaque(), releaseCallback
        )
    }
}

/// A pad (holds a reference of its own).
public final class Pad: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<GstPad>

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

    /// Whether the pad is linked to a peer.
    public var isLinked: Bool { gst_pad_is_linked(pointer) != 0 }

    /// Links this (source) pad to `sink`; false if GStreamer refuses (incompatible caps, already linked).
    public func link(to sink: Pad) -> Bool {
        gst_pad_link(pointer, sink.pointer) == GST_PAD_LINK_OK
    }

    /// The media type of the pad's caps ("audio/x-raw", "video/x-h264", …): its current caps, else what it can
    /// produce; nil if it has none.
    public var mediaType: String? {
        guard let caps = gst_pad_get_current_caps(pointer) ?? gst_pad_query_caps(pointer, nil) else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0) else { return nil }
        return String(cString: gst_structure_get_name(structure))
    }
}
