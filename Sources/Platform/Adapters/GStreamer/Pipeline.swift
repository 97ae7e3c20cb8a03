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
    public func make(_ factory: String, name: String?) throws(GStreamerError) -> Element {
        guard let element = gst_element_factory_make(factory, name) else {
            throw GStreamerError(MissingElements([factory]))
        }
        guard gst_bin_add(cgst_bin(pointer), element) != 0 else {
            throw GStreamerError(code: .pipeline, message: "GStreamer could not add \(factory)")
        }
        return Element(element)
    }

    /// The element named `name` (at any depth), if any.
    public func element(named name: String) -> Element? {
        guard let found = gst_bin_get_by_name(cgst_bin(pointer), name) else { return nil }
        // The pipeline keeps its own reference for as long as the handle may be used.
        gst_object_unref(found)
        return Element(found)
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
let releaseCallback: GClosureNotify = { context, _ in
    guard let context else { return }
    Unmanaged<AnyObject>.fromOpaque(context).release()
}
