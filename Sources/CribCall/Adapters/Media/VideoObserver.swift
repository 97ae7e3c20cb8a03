import Synchronization

/// Test-only (``GStreamerMediaEngine/Configuration/videoObserver``): what the video half of the peers of one engine
/// did — the sizes a sender sent (the configured one, then each weak-link switch) and the sizes and frames a
/// receiver decoded — for tests that cannot see inside the pipelines.
final class VideoObserver: Sendable {
    /// A width and height ("854x480").
    struct Size: Sendable, Hashable, CustomStringConvertible {
        var width: Int
        var height: Int

        var description: String { "\(width)x\(height)" }
    }

    private struct Seen {
        var sent: [Size] = []
        var decoded: [Size] = []
        /// Frames decoded at each size.
        var frames: [Size: Int] = [:]
    }

    private let seen = Mutex(Seen())

    init() {}

    /// The sizes a sender sent, in order: the configured one when the stream connected, then one per switch.
    var sentSizes: [Size] { seen.withLock { $0.sent } }

    /// The sizes a receiver's decoder produced, in order.
    var decodedSizes: [Size] { seen.withLock { $0.decoded } }

    /// The frames a receiver decoded at `size`.
    func decodedFrames(at size: Size) -> Int { seen.withLock { $0.frames[size] ?? 0 } }

    func sent(_ format: GStreamerMediaEngine.VideoFormat) {
        seen.withLock { $0.sent.append(Size(width: format.width, height: format.height)) }
    }

    func decodedSize(width: Int, height: Int) {
        seen.withLock { seen in
            let size = Size(width: width, height: height)
            if seen.decoded.last != size { seen.decoded.append(size) }
        }
    }

    func decodedFrame() {
        seen.withLock { seen in
            guard let size = seen.decoded.last else { return }
            seen.frames[size, default: 0] += 1
        }
    }
}
