public import CribCallMonitor
import SafetyDetection
import Synchronization

/// A camera twin: the test shows it frames (a plain or textured cot, a moving "baby") and can unplug it.
public final class TestCamera: SafetyCamera {
    private let continuation: AsyncStream<SafetyCameraEvent>.Continuation
    private let stream: Mutex<AsyncStream<SafetyCameraEvent>?>
    /// The evidence picture: a few bytes with a JPEG's start marker.
    public let evidence: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 400)

    public init() {
        let (events, continuation) = AsyncStream.makeStream(of: SafetyCameraEvent.self)
        self.continuation = continuation
        stream = Mutex(events)
    }

    public func safetyEvents() -> AsyncStream<SafetyCameraEvent> {
        stream.withLock { $0.take() } ?? AsyncStream { $0.finish() }
    }

    public var latestEvidence: (width: Int, height: Int, jpeg: [UInt8])? { (320, 240, evidence) }
    public func start() {}
    public func stop() { continuation.finish() }
    /// Counts "Reconnect camera" presses.
    public func reconnect() { reconnectCount.withLock { $0 += 1 } }
    /// How often ``reconnect()`` was called.
    public var reconnections: Int { reconnectCount.withLock { $0 } }
    private let reconnectCount = Mutex(0)

    /// A 160×120 frame: a patterned cot with a bright "baby" at `x` (or a dark room).
    public func show(babyAt x: Int = 60, dark: Bool = false) {
        var pixels = [UInt8](repeating: dark ? 5 : 120, count: 160 * 120)
        if !dark {
            for y in 0..<120 {
                for column in 0..<160 where (column / 8 + y / 8) % 2 == 0 { pixels[y * 160 + column] = 140 }
            }
            for y in 50..<70 {
                for column in x..<min(160, x + 30) { pixels[y * 160 + column] = 210 }
            }
        }
        continuation.yield(.frame(GrayFrame(width: 160, height: 120, pixels: pixels), faces: nil, at: .now))
    }

    public func unplug(_ reason: String) { continuation.yield(.lost(reason)) }

    private let showing = Mutex<Task<Void, Never>?>(nil)

    /// Shows ``show(babyAt:dark:)``'s frame every 200 ms (a camera's 5 fps) until ``stopShowing()``: one frame alone
    /// pauses monitoring ("camera disconnected") 2 s later, which a loaded machine reaches in the middle of a test.
    public func keepShowing() {
        let task = Task { [self] in
            while !Task.isCancelled {
                show()
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        showing.withLock { previous in
            previous?.cancel()
            previous = task
        }
    }

    /// Stops ``keepShowing()`` and returns once no more frames come (a frame after an unplug means it is back).
    public func stopShowing() async {
        let task = showing.withLock { $0.take() }
        task?.cancel()
        await task?.value
    }
}
