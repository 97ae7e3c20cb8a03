import Synchronization

/// The live audio of one input, shared: sound detection and every live stream hear the same microphone
/// (a baby monitor has one, and an ALSA device opens only once).
///
/// An ``AudioInput`` publishes every buffer it captures, as soon as it has it, in small frames (10–20 ms); each
/// subscriber gets them synchronously on the input's thread, in order, with the moment they were captured.
///
/// ```swift
/// let input = try AudioInputs.open(spec)
/// let subscription = input.liveFeed?.subscribe { frame in
///     push(frame.samples, capturedAt: frame.capturedAt)       // must return quickly: it runs on the capture thread
/// }
/// …
/// subscription?.cancel()                                        // or drop it
/// ```
///
/// - Samples are mono `Float` in −1...1 at ``sampleRate``.
/// - Publishing with no subscriber costs a lock and nothing else.
/// - Handlers must not block and must not subscribe or cancel from inside a handler (the list is locked then).
public final class LiveAudioFeed: Sendable {
    /// A run of consecutive samples.
    public struct Frame: Sendable {
        /// Mono samples in −1...1 at the feed's ``LiveAudioFeed/sampleRate``.
        public var samples: [Float]
        /// When the last sample was captured (a live source delivers a buffer once it is full), on the
        /// continuous clock: the first sample is `samples.count / sampleRate` seconds older.
        public var capturedAt: ContinuousClock.Instant

        public init(samples: [Float], capturedAt: ContinuousClock.Instant) {
            self.samples = samples
            self.capturedAt = capturedAt
        }
    }

    /// A subscriber's registration: ``cancel()`` (or releasing it) stops delivery; after ``cancel()`` returns,
    /// the handler is not running and will not run again.
    public final class Subscription: Sendable {
        private let cancellation: Mutex<(@Sendable () -> Void)?>

        fileprivate init(cancel: @escaping @Sendable () -> Void) {
            cancellation = Mutex(cancel)
        }

        deinit { cancel() }

        /// Stops delivery. Idempotent.
        public func cancel() {
            let cancel = cancellation.withLock { stored in
                defer { stored = nil }
                return stored
            }
            cancel?()
        }
    }

    private struct Subscribers {
        var nextId = 0
        var handlers: [Int: @Sendable (Frame) -> Void] = [:]
    }

    /// Samples per second of the published audio.
    public let sampleRate: Int
    private let subscribers = Mutex(Subscribers())

    /// - Parameter sampleRate: Samples per second of what will be published; at least 1.
    public init(sampleRate: Int) {
        precondition(sampleRate > 0, "LiveAudioFeed: sampleRate must be positive")
        self.sampleRate = sampleRate
    }

    /// How many subscribers are registered.
    public var subscriberCount: Int {
        subscribers.withLock { $0.handlers.count }
    }

    /// Registers `handler` for every frame published from now on.
    ///
    /// - Parameter handler: Called on the publisher's thread; it must return quickly.
    /// - Returns: The registration; keep it as long as frames are wanted.
    public func subscribe(_ handler: @escaping @Sendable (Frame) -> Void) -> Subscription {
        let id = subscribers.withLock { subscribers in
            defer { subscribers.nextId += 1 }
            subscribers.handlers[subscribers.nextId] = handler
            return subscribers.nextId
        }
        return Subscription { [weak self] in
            _ = self?.subscribers.withLock { $0.handlers.removeValue(forKey: id) }
        }
    }

    /// Hands a frame to every subscriber (inputs call this).
    ///
    /// Runs the handlers under the subscriber lock, which is what lets ``Subscription/cancel()`` promise that a
    /// cancelled handler is no longer running.
    public func publish(_ frame: Frame) {
        subscribers.withLock { subscribers in
            for handler in subscribers.handlers.values { handler(frame) }
        }
    }

    /// Whether anyone listens (lets an input skip copying samples nobody wants).
    public var hasSubscribers: Bool { subscriberCount > 0 }
}
