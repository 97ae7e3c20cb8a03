import ControlTransport
import CribCallControl
public import CribCallProtocol
import CribCallStore
import Foundation
import StreamMedia

/// The `reason` of ``MonitorEvent/streamEnded(sessionId:reason:)``: a stable token, then details for a failure.
public enum StreamEndReason {
    /// The listener sent END_STREAM.
    public static let endedByListener = "ended_by_listener"
    /// The monitor ended it (``MonitorService/endStream(sessionId:)``).
    public static let endedByMonitor = "ended_by_monitor"
    /// An automatic stream reached `autoStreamSec` without being pinned.
    public static let timedOut = "timed_out"
    /// The listener's control connection ended.
    public static let connectionClosed = "connection_closed"
    /// The media pipeline failed; the event's reason is `"media_failed: <what happened>"`.
    public static let mediaFailed = "media_failed"
    /// Monitoring was switched off at the monitor.
    public static let monitoringOff = "monitoring_off"
}

/// One stream's media peer (the sender), tied by `token` to the stream it was made for: a peer made for an earlier
/// stream with the same id, or still being made when its stream ended, is never used.
struct MediaSlot {
    let token: UInt64
    var peer: (any MediaPeer)?
    var pump: Task<Void, Never>?
}

// Live streams (PROTOCOL.md §9): StreamSessions decides, this extension performs — media senders, signaling on the
// owner's connection, the auto-stop timer, and the UI events.
extension MonitorService {
    /// How many ended session ids are remembered, so that a late WEBRTC_ICE or PIN_STREAM racing the end of its
    /// stream is dropped silently instead of answered with an error.
    static let rememberedEndedStreams = 64

    /// The streams running now, by session id.
    public var activeStreams: [StreamSessions.Stream] {
        streams.active
    }

    /// Ends a stream from the monitor's side: the listener gets END_STREAM once; unknown or ended ids are ignored.
    /// - Parameter sessionId: The stream to end.
    public func endStream(sessionId: String) {
        perform(streams.end(sessionId: sessionId), endReason: StreamEndReason.endedByMonitor)
    }

    // MARK: messages from listeners

    func handleStart(_ request: StartStreamRequest, connection id: UInt64) -> [ControlSession.Action] {
        func decline(_ reason: String) -> [ControlSession.Action] {
            [
                .send(
                    .startStreamResponse(
                        StartStreamResponse(sessionId: request.sessionId, accepted: false, reason: reason)))
            ]
        }
        guard mediaEngine != nil else {
            return decline("this monitor runs without a media pipeline: live streaming is not available")
        }
        guard settings.monitoring else { return decline(Self.monitoringOffReason) }
        // Through the outbox: the response must reach the listener before the sender's offer.
        perform(streams.handleStart(request, from: id), endReason: StreamEndReason.mediaFailed)
        return []
    }

    func handleAnswer(_ answer: SessionDescription, connection id: UInt64) async -> [ControlSession.Action] {
        let type = ControlMessageType.webrtcAnswer
        switch check(answer.sessionId, connection: id, type: type) {
        case .reject(let error):
            return [.send(error)]
        case .ignore:
            return []
        case .owned:
            break
        }
        guard let peer = media[answer.sessionId]?.peer else {
            return [
                .send(
                    .error(
                        .protocolError, "stream \(answer.sessionId) has no offer to answer yet",
                        inReplyTo: type.rawValue))
            ]
        }
        do {
            try await peer.setRemoteDescription(sdp: answer.sdp)
            return []
        } catch {
            perform(streams.end(sessionId: answer.sessionId), endReason: "\(StreamEndReason.mediaFailed): \(error)")
            return [
                .send(
                    .error(
                        .protocolError, "the answer for stream \(answer.sessionId) was refused: \(error)",
                        inReplyTo: type.rawValue))
            ]
        }
    }

    func handleCandidate(_ message: IceCandidateMessage, connection id: UInt64) async -> [ControlSession.Action] {
        let type = ControlMessageType.webrtcIce
        switch check(message.sessionId, connection: id, type: type) {
        case .reject(let error):
            return [.send(error)]
        case .ignore:
            return []
        case .owned:
            break
        }
        guard let peer = media[message.sessionId]?.peer else {
            return [
                .send(
                    .error(
                        .protocolError, "stream \(message.sessionId) has no offer yet",
                        inReplyTo: type.rawValue))
            ]
        }
        do {
            try await peer.addRemoteCandidate(message.candidate)
            return []
        } catch {
            // One bad candidate does not end a stream: ICE goes on with the others.
            return [
                .send(
                    .error(
                        .protocolError, "candidate refused for stream \(message.sessionId): \(error)",
                        inReplyTo: type.rawValue))
            ]
        }
    }

    func handleEnd(_ reference: StreamReference, connection id: UInt64) -> [ControlSession.Action] {
        // END_STREAM is idempotent (PROTOCOL.md §4): a second one, or one for an unknown stream, is harmless.
        if let stream = streams.stream(reference.sessionId), stream.connection != id {
            return [.send(notYours(reference.sessionId, type: .endStream))]
        }
        perform(streams.handleEnd(reference, from: id), endReason: StreamEndReason.endedByListener)
        return []
    }

    func handlePin(_ reference: StreamReference, connection id: UInt64) -> [ControlSession.Action] {
        switch check(reference.sessionId, connection: id, type: .pinStream) {
        case .reject(let error):
            return [.send(error)]
        case .ignore:
            return []
        case .owned:
            perform(streams.handlePin(reference, from: id), endReason: StreamEndReason.endedByListener)
            return []
        }
    }

    enum StreamCheck {
        /// The connection owns this running stream.
        case owned
        /// The stream just ended: a message racing its end is dropped without a reply.
        case ignore
        /// Answer with this ERROR; the connection stays open.
        case reject(ControlMessage)
    }

    /// Whether `connection` may signal for `sessionId`.
    func check(_ sessionId: String, connection id: UInt64, type: ControlMessageType) -> StreamCheck {
        guard let stream = streams.stream(sessionId) else {
            if recentlyEnded.contains(sessionId) { return .ignore }
            return .reject(
                .error(
                    .protocolError, "no stream with sessionId \(quoted(sessionId)) is running",
                    inReplyTo: type.rawValue))
        }
        return stream.connection == id ? .owned : .reject(notYours(sessionId, type: type))
    }

    private func notYours(_ sessionId: String, type: ControlMessageType) -> ControlMessage {
        .error(.unauthorized, "stream \(quoted(sessionId)) belongs to another listener", inReplyTo: type.rawValue)
    }

    private func quoted(_ sessionId: String) -> String {
        // The id is peer-chosen text going back into an error message: keep it short.
        "\"" + String(sessionId.prefix(StreamSessions.maxSessionIdLength)) + "\""
    }

    // MARK: automatic streams

    /// Sends NOISE_EVENT to one trusted listener, starting an automatic stream for it when the settings ask for one
    /// and it has no stream running (a listener already watching does not need a second stream).
    func sendNoise(_ event: NoiseEvent, to id: UInt64) {
        guard let session = sessions[id] else { return }
        var message = event
        var start: [StreamSessions.Action] = []
        let mediaType: MediaType? =
            switch settings.autoStream {
            case .none: nil
            case .audio: .audio
            case .audioVideo: .audioVideo
            }
        if let mediaType, mediaEngine != nil, !streams.active.contains(where: { $0.connection == id }) {
            let sessionId = UUID().uuidString.lowercased()
            start = streams.startAutomatic(
                sessionId: sessionId, mediaType: mediaType, to: id,
                duration: .seconds(settings.autoStreamSec), now: streamClock.now)
            if !start.isEmpty { message.autoStreamSessionId = sessionId }
        }
        // The NOISE_EVENT naming the stream goes first; the offer follows from the sender.
        session.outbox.send(.noiseEvent(message))
        perform(start, endReason: StreamEndReason.mediaFailed)
    }

    // MARK: performing StreamSessions' actions

    /// Carries out the actions in order, then re-arms the auto-stop timer.
    /// - Parameters:
    ///   - actions: What StreamSessions decided.
    ///   - endReason: The reason reported for every stream these actions stop.
    func perform(_ actions: [StreamSessions.Action], endReason: String) {
        for action in actions {
            switch action {
            case .send(let message, let connection):
                sessions[connection]?.outbox.send(message)
            case .startMedia(let sessionId, let mediaType, let connection):
                let automatic = streams.stream(sessionId)?.autoStopAt != nil
                emit.yield(
                    .streamStarted(
                        sessionId: sessionId, listenerId: sessions[connection]?.listenerId ?? "",
                        mediaType: mediaType, automatic: automatic))
                startSender(sessionId: sessionId, mediaType: mediaType)
            case .stopMedia(let sessionId):
                stopSender(sessionId: sessionId)
                recentlyEnded.append(sessionId)
                if recentlyEnded.count > Self.rememberedEndedStreams { recentlyEnded.removeFirst() }
                emit.yield(.streamEnded(sessionId: sessionId, reason: endReason))
            }
        }
        rearmStreamTimer()
    }

    private func startSender(sessionId: String, mediaType: MediaType) {
        nextMediaToken += 1
        let token = nextMediaToken
        media[sessionId] = MediaSlot(token: token)
        Task { await self.attachSender(sessionId: sessionId, mediaType: mediaType, token: token) }
    }

    private func attachSender(sessionId: String, mediaType: MediaType, token: UInt64) async {
        guard let mediaEngine else { return }
        let peer: any MediaPeer
        do {
            peer = try await mediaEngine.makeSender(sessionId: sessionId, mediaType: mediaType)
        } catch {
            guard media[sessionId]?.token == token else { return }
            perform(streams.end(sessionId: sessionId), endReason: "\(StreamEndReason.mediaFailed): \(error)")
            return
        }
        guard media[sessionId]?.token == token else {
            // The stream ended while its sender was being made.
            await peer.stop()
            return
        }
        media[sessionId]?.peer = peer
        media[sessionId]?.pump = Task { [weak self] in
            for await event in peer.events {
                await self?.mediaEvent(event, sessionId: sessionId, token: token)
            }
        }
    }

    private func stopSender(sessionId: String) {
        guard let slot = media.removeValue(forKey: sessionId), let peer = slot.peer else { return }
        // The pump runs on until the peer's `.ended`, which is then ignored (the slot is gone).
        Task { await peer.stop() }
    }

    /// Relays what the sender reports to the listener that owns the stream.
    private func mediaEvent(_ event: MediaEvent, sessionId: String, token: UInt64) {
        guard media[sessionId]?.token == token, let stream = streams.stream(sessionId) else { return }
        let outbox = sessions[stream.connection]?.outbox
        switch event {
        case .localDescription(let sdp):
            outbox?.send(.webrtcOffer(SessionDescription(sessionId: sessionId, sdp: sdp)))
        case .localCandidate(let candidate):
            outbox?.send(.webrtcIce(IceCandidateMessage(sessionId: sessionId, candidate: candidate)))
        case .flowing:
            break
        case .ended(let reason):
            perform(streams.end(sessionId: sessionId), endReason: "\(StreamEndReason.mediaFailed): \(reason)")
        }
    }

    // MARK: the auto-stop timer

    /// Sleeps on the stream clock until StreamSessions' next deadline (if it changed), then ticks.
    private func rearmStreamTimer() {
        let deadline = streams.nextDeadline
        guard deadline != streamTimer?.deadline else { return }
        streamTimer?.task.cancel()
        streamTimer = nil
        guard let deadline else { return }
        nextTimerGeneration += 1
        let generation = nextTimerGeneration
        let clock = streamClock
        let task = Task { [weak self] in
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            await self?.streamTimerFired(generation: generation)
        }
        streamTimer = (task, deadline, generation)
    }

    private func streamTimerFired(generation: UInt64) {
        // A timer replaced after it woke, but before it got here, must not disarm its successor.
        guard streamTimer?.generation == generation else { return }
        streamTimer = nil
        perform(streams.tick(now: streamClock.now), endReason: StreamEndReason.timedOut)
    }
}
