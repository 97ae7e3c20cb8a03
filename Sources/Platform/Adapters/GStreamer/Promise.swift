import CGStreamer
import Synchronization

/// A `GstPromise` (webrtcbin's asynchronous replies) whose outcome goes to a Swift closure, exactly once: the reply (or interruption/expiry) when
/// webrtcbin settles it, or "dropped" if it is freed unsettled (e.g. the pipeline stopped first), so an awaiting
/// caller is always resumed.
final class PromiseHandler: Sendable {
    /// How a promise ended.
    enum Reply {
        /// Replied; the structure (owned by the promise, valid during the handler) may be absent.
        case replied(UnsafePointer<GstStructure>?)
        /// Interrupted, expired, or freed without a reply.
        case failed(String)

        /// Why the promise gave no reply ("" for a reply).
        var failure: String {
            if case .failed(let reason) = self { return reason }
            return ""
        }
    }

    private let handler: Mutex<(@Sendable (Reply) -> Void)?>

    private init(_ handler: @escaping @Sendable (Reply) -> Void) {
        self.handler = Mutex(handler)
    }

    /// A new promise (one reference, the caller's) that calls `handler` once, on a GStreamer thread.
    static func make(_ handler: @escaping @Sendable (Reply) -> Void) -> UnsafeMutablePointer<GstPromise> {
        let box = Unmanaged.passRetained(PromiseHandler(handler)).toOpaque()
        return gst_promise_new_with_change_func(changed, box, destroyed)
    }

    private func fire(_ reply: Reply) {
        let handler = self.handler.withLock { handler in
            defer { handler = nil }
            return handler
        }
        handler?(reply)
    }

    private static let changed: GstPromiseChangeFunc = { promise, context in
        guard let promise, let context else { return }
        let box = Unmanaged<PromiseHandler>.fromOpaque(context).takeUnretainedValue()
        switch gst_promise_wait(promise) {
        case GST_PROMISE_RESULT_REPLIED:
            box.fire(.replied(gst_promise_get_reply(promise)))
        case GST_PROMISE_RESULT_INTERRUPTED:
            box.fire(.failed("the request was interrupted"))
        case GST_PROMISE_RESULT_EXPIRED:
            box.fire(.failed("the request expired"))
        default:
            box.fire(.failed("the request was not answered"))
        }
    }

    private static let destroyed: GDestroyNotify = { context in
        guard let context else { return }
        let box = Unmanaged<PromiseHandler>.fromOpaque(context).takeRetainedValue()
        box.fire(.failed("the stream stopped before webrtcbin answered"))
    }

    /// The message of the `error` field of a webrtcbin reply, if it has one.
    static func errorText(_ structure: UnsafePointer<GstStructure>?) -> String? {
        guard let structure, gst_structure_has_field(structure, "error") != 0 else { return nil }
        guard let value = gst_structure_get_value(structure, "error"), let boxed = g_value_get_boxed(value) else {
            return "unknown error"
        }
        return String(cString: boxed.assumingMemoryBound(to: GError.self).pointee.message)
    }
}
