import CGStreamer

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

    /// Sets an unsigned integer property (`guint`).
    public func set(_ property: String, _ value: UInt32) {
        cgst_object_set_uint(pointer, property, value)
    }

    /// Whether the element has a property of that name (some depend on the plugin's version).
    public func hasProperty(_ property: String) -> Bool {
        cgst_object_has_property(pointer, property) != 0
    }

    /// A string property's value; nil when it is unset.
    public func string(_ property: String) -> String? {
        guard let value = cgst_object_dup_string(pointer, property) else { return nil }
        defer { g_free(value) }
        return String(cString: value)
    }

    /// The name of the element's factory ("dtlssrtpdec", …).
    public var factoryName: String { String(cString: cgst_element_factory_name(pointer)) }

    /// Brings an element added to a running pipeline to its parent's state.
    public func syncStateWithParent() {
        gst_element_sync_state_with_parent(pointer)
    }

    /// A new request pad from the template (e.g. "src_%u" of a tee, "video_%u" of a muxer).
    public func requestPad(_ template: String) -> Pad? {
        gst_element_request_pad_simple(pointer, template).map(Pad.init(taking:))
    }

    /// A reference of the caller's own, for an element used after the callback that found it.
    public func retained() -> RetainedElement {
        RetainedElement(self)
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

    func connect<Argument>(_ signal: String, _ handler: GCallback, _ callback: Callback<Argument>) {
        cgst_signal_connect(
            pointer, signal, handler, Unmanaged.passRetained(callback).toOpaque(), releaseCallback
        )
    }
}

/// An element with a reference of its own (released when this is deinitialised), for elements kept beyond the
/// callback that found them.
public final class RetainedElement: Sendable {
    public let element: Element

    init(_ element: Element) {
        gst_object_ref(UnsafeMutableRawPointer(element.pointer))
        self.element = element
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(element.pointer))
    }
}
