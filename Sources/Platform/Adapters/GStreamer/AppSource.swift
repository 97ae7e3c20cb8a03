import CGStreamer

/// Pushes samples into an `appsrc` from any thread.
///
/// Holds a reference to the element, released in `deinit`; `gst_app_src_push_buffer` is thread-safe, and pushing
/// into an appsrc whose pipeline is going down just returns FLUSHING.
public final class AppSource: Sendable {
    private let source: RetainedElement

    /// - Parameter element: an `appsrc`.
    public init(_ element: Element) {
        source = element.retained()
    }

    /// Copies `samples` into a new buffer and queues it (an appsrc with `do-timestamp` stamps it on arrival).
    public func push(_ samples: [Float]) {
        guard !samples.isEmpty else { return }
        let size = samples.count * MemoryLayout<Float>.size
        guard let buffer = gst_buffer_new_allocate(nil, gsize(size), nil) else { return }
        samples.withUnsafeBytes { bytes in
            _ = gst_buffer_fill(buffer, 0, bytes.baseAddress, gsize(size))
        }
        // Takes the buffer; the result only says whether the pipeline still flows.
        _ = gst_app_src_push_buffer(cgst_app_src(source.element.pointer), buffer)
    }
}
