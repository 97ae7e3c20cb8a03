import CribCallProtocol
import GStreamer
import StreamMedia
import Synchronization

/// One WebRTC peer (sender or receiver) of the ``GStreamerMediaEngine``: the `MediaPeer` face of a
/// ``WebRTCPipeline``. Releasing it stops the pipeline.
final class GStreamerMediaPeer: MediaPeer {
    let sessionId: String
    let events: AsyncStream<MediaEvent>
    private let statistics: WebRTCPipeline.Statistics
    private let exited: Mutex<Exit>

    private struct Exit {
        /// The running pipeline; nil once it has been released.
        var pipeline: WebRTCPipeline?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private init(
        sessionId: String, pipeline: WebRTCPipeline, statistics: WebRTCPipeline.Statistics,
        events: AsyncStream<MediaEvent>
    ) {
        self.sessionId = sessionId
        exited = Mutex(Exit(pipeline: pipeline))
        self.statistics = statistics
        self.events = events
    }

    /// Builds and starts a pipeline; returns once it is PLAYING.
    static func start(
        _ role: WebRTCPipeline.Role,
        sessionId: String,
        configuration: GStreamerMediaEngine.Configuration
    ) async throws(MediaError) -> GStreamerMediaPeer {
        let (events, continuation) = AsyncStream.makeStream(of: MediaEvent.self, bufferingPolicy: .unbounded)
        let statistics = WebRTCPipeline.Statistics()
        let exitBox = ExitBox()
        let pipeline = try WebRTCPipeline(
            role: role,
            sessionId: sessionId,
            configuration: configuration,
            continuation: continuation,
            statistics: statistics,
            onExit: { exitBox.peer?.pipelineDidExit() }
        )
        let peer = GStreamerMediaPeer(sessionId: sessionId, pipeline: pipeline, statistics: statistics, events: events)
        exitBox.set(peer)
        try await pipeline.start()
        return peer
    }

    deinit {
        exited.withLock { $0.pipeline }?.requestStop(reason: "the stream was released")
    }

    /// The running pipeline, or the error for a peer that has ended.
    private func running() throws(MediaError) -> WebRTCPipeline {
        guard let pipeline = exited.withLock({ $0.pipeline }) else {
            throw MediaError(code: .ended, message: "the stream \(sessionId) has ended")
        }
        return pipeline
    }

    func setRemoteDescription(sdp: String) async throws {
        try await running().setRemoteDescription(sdp)
    }

    func addRemoteCandidate(_ candidate: IceCandidateMessage.Candidate) async throws {
        try running().addRemoteCandidate(candidate)
    }

    func stop() async {
        guard let pipeline = exited.withLock({ $0.pipeline }) else { return }
        pipeline.requestStop(reason: "stopped")
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = exited.withLock { exit in
                if exit.pipeline != nil { exit.waiters.append(waiter) }
                return exit.pipeline == nil
            }
            if done { waiter.resume() }
        }
    }

    /// Whether the GstPipeline has been finalised and the ``WebRTCPipeline`` deinitialised (for tests: proves
    /// that a run released every GStreamer object and balanced every `Unmanaged` retain).
    var isFullyReleased: Bool {
        statistics.pipelineFinalized.load(ordering: .acquiring)
            && statistics.pipelineObjectReleased.load(ordering: .acquiring)
    }

    /// VP8 frames this sender has encoded (0 for an `audio` stream or a receiver).
    var encodedVideoFrames: Int { statistics.encodedVideoFrames.load(ordering: .relaxed) }

    /// A running pipeline's element by name: its factory and the value of a string property (for tests: which
    /// source a sender's video comes from).
    func element(named name: String, property: String) -> (factory: String, value: String?)? {
        guard let element = exited.withLock({ $0.pipeline })?.pipeline.element(named: name) else { return nil }
        return (element.factoryName, element.string(property))
    }

    /// VP8 frames this receiver has decoded (0 until an offer with video has been answered and frames arrive).
    var decodedVideoFrames: Int { statistics.decodedVideoFrames.load(ordering: .relaxed) }

    /// Called on the pipeline's thread once the pipeline has been released.
    private func pipelineDidExit() {
        let waiters = exited.withLock { exit in
            exit.pipeline = nil
            defer { exit.waiters = [] }
            return exit.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A weak link from the pipeline's exit callback to the peer, which is created after the pipeline.
private final class ExitBox: Sendable {
    private let reference = Mutex<WeakPeer>(WeakPeer())

    private struct WeakPeer {
        weak var peer: GStreamerMediaPeer?
    }

    var peer: GStreamerMediaPeer? { reference.withLock { $0.peer } }

    func set(_ peer: GStreamerMediaPeer) {
        reference.withLock { $0.peer = peer }
    }
}
