import CGStreamer

/// Pushes samples of the shared microphone into a sender's `appsrc`, from the capture thread.
///
/// `@unchecked Sendable`: the only stored state is a reference to the appsrc, taken at `init` and released in
/// `deinit`; `gst_app_src_push_buffer` is thread-safe, and pushing into an appsrc whose pipeline is going down
/// just returns FLUSHING.
final class AppSourcePusher: @unchecked Sendable {
    #if _endian(little)
        static let sampleFormat = "F32LE"
    #else
        static let sampleFormat = "F32BE"
    #endif

    private let appsrc: UnsafeMutablePointer<GstElement>
    let sampleRate: Int

    /// - Parameters:
    ///   - appsrc: An `appsrc` with a reference the pusher takes over.
    ///   - sampleRate: The rate its caps announce.
    init(_ appsrc: UnsafeMutablePointer<GstElement>, sampleRate: Int) {
        self.appsrc = appsrc
        self.sampleRate = sampleRate
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(appsrc))
    }

    /// Copies `samples` into a new buffer and queues it (the appsrc timestamps it on arrival).
    func push(_ samples: [Float]) {
        guard !samples.isEmpty else { return }
        let size = samples.count * MemoryLayout<Float>.size
        guard let buffer = gst_buffer_new_allocate(nil, gsize(size), nil) else { return }
        samples.withUnsafeBytes { bytes in
            _ = gst_buffer_fill(buffer, 0, bytes.baseAddress, gsize(size))
        }
        // Takes the buffer; the result only says whether the pipeline still flows.
        _ = gst_app_src_push_buffer(cgst_app_src(appsrc), buffer)
    }
}
