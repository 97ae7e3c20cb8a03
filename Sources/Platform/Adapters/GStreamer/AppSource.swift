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
        push(samples, presentationTime: nil, duration: nil)
    }

    /// Copies `samples` into a new buffer stamped with its own timeline position and queues it: for a stream
    /// whose timeline is the audio itself rather than the moment it arrived (e.g. a recording that leaves out the
    /// time an input was lost).
    ///
    /// - Parameters:
    ///   - presentationTime: The buffer's PTS; nil leaves it unset.
    ///   - duration: The buffer's duration; nil leaves it unset.
    public func push(_ samples: [Float], presentationTime: Duration?, duration: Duration?) {
        samples.withUnsafeBytes { bytes in
            push(bytes, presentationTime: presentationTime, duration: duration)
        }
    }

    /// Copies raw bytes (e.g. the pixels of a video frame in the appsrc's caps) into a new buffer stamped with its
    /// place on the timeline, and queues it.
    public func push(bytes: [UInt8], presentationTime: Duration?, duration: Duration?) {
        bytes.withUnsafeBytes { raw in
            push(raw, presentationTime: presentationTime, duration: duration)
        }
    }

    private func push(_ bytes: UnsafeRawBufferPointer, presentationTime: Duration?, duration: Duration?) {
        let size = bytes.count
        guard size > 0, let buffer = gst_buffer_new_allocate(nil, gsize(size), nil) else { return }
        _ = gst_buffer_fill(buffer, 0, bytes.baseAddress, gsize(size))
        if let presentationTime { buffer.pointee.pts = ClockTime.from(presentationTime) }
        if let duration { buffer.pointee.duration = ClockTime.from(duration) }
        // Takes the buffer; the result only says whether the pipeline still flows.
        _ = gst_app_src_push_buffer(cgst_app_src(source.element.pointer), buffer)
    }

    /// Ends the stream: downstream elements finish what they hold (an encoder drains, a muxer writes its index)
    /// and the pipeline posts EOS on its bus once every sink has it. Later pushes are refused.
    public func endOfStream() {
        _ = gst_app_src_end_of_stream(cgst_app_src(source.element.pointer))
    }
}
