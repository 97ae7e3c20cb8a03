import Foundation
import GStreamer
import Synchronization

/// A capture's video at its full size and rate, for live streams in the same process: the camera is opened once,
/// by the capture, and every stream watches it through GStreamer's in-process video channel
/// (`intervideosink` in the capture's pipeline, `intervideosrc channel=…` in the stream's). A camera cannot be
/// opened twice, so a monitor that both watches its camera for safety and streams it needs this.
///
/// Nothing flows while nobody watches: the capture's live branch starts with a `valve` that opens when the first
/// ``Viewer`` appears and closes when the last one goes. When the capture loses its camera, the channel's
/// `intervideosrc` shows black after its timeout (1 s): a viewer never sees a frozen picture as live.
///
/// Created by the capture (``VideoCapture/liveFeed``) and kept across its reconnections.
public final class LiveVideoFeed: Sendable {
    /// The channel name for `intervideosrc` (unique for each capture).
    public let channel: String

    private let state = Mutex(State())

    private struct State {
        var viewers = 0
        /// The running pipeline's valve, if one runs.
        var valve: RetainedElement?
    }

    init() {
        channel = "homeapps-camera-\(UUID().uuidString.lowercased())"
    }

    /// How many viewers watch now.
    public var viewerCount: Int { state.withLock { $0.viewers } }

    /// Starts watching: the frames flow into ``channel`` until the viewer is cancelled (or released).
    public func watch() -> Viewer {
        state.withLock { state in
            state.viewers += 1
            state.valve?.element.set("drop", state.viewers == 0)
        }
        return Viewer(feed: self)
    }

    fileprivate func release() {
        state.withLock { state in
            state.viewers = max(0, state.viewers - 1)
            state.valve?.element.set("drop", state.viewers == 0)
        }
    }

    /// A new pipeline run's valve (nil when the run ends): set to the viewers of now.
    func attach(valve: Element?) {
        state.withLock { state in
            valve?.set("drop", state.viewers == 0)
            state.valve = valve?.retained()
        }
    }

    /// One stream watching the feed; the frames stop for it on ``cancel()`` or when it is released.
    public final class Viewer: Sendable {
        private let feed: LiveVideoFeed
        private let cancelled = Atomic<Bool>(false)

        fileprivate init(feed: LiveVideoFeed) {
            self.feed = feed
        }

        /// Stops watching (idempotent).
        public func cancel() {
            guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            feed.release()
        }

        deinit {
            cancel()
        }
    }
}
