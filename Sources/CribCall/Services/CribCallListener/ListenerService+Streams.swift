import ControlTransport
public import CribCallProtocol
import CribCallStore
import Foundation
import StreamMedia

/// The live control connection to one monitor, while connected.
struct Link {
    let connection: any ControlConnection
    let report: AsyncStream<ListenerEvent>.Continuation
    let token: UInt64
}

/// One live stream from a monitor. Its receiver is made when the monitor's WEBRTC_OFFER arrives (for an automatic
/// stream the offer is the first place that says what it carries).
struct LiveStream {
    let monitorId: String
    var mediaType: MediaType?
    let automatic: Bool
    let token: UInt64
    var peer: (any MediaPeer)?
    var pump: Task<Void, Never>?
    /// `streamStarted` was reported (media flows).
    var started = false
}

/// An `openStream` waiting for START_STREAM_RESPONSE.
struct PendingStart {
    let monitorId: String
    let order: UInt64
    let outcome: AsyncStream<StartOutcome>.Continuation
}

enum StartOutcome {
    case accepted
    case declined(String)
}

// Live streams (PROTOCOL.md §9) on the listener's side: START_STREAM_REQUEST, a receiver per stream that answers
// the monitor's offer, ICE both ways, PIN_STREAM, END_STREAM either way, and the `onNoise` setting for automatic
// streams. A stream lives as long as its monitor's connection.
extension ListenerService {
    /// Stream-signaling types whose errors concern one stream, never the pairing: the monitor answers them with an
    /// ERROR (UNAUTHORIZED for another listener's stream) and keeps the connection.
    static let streamSignalingTypes: Set<String> = [
        ControlMessageType.webrtcAnswer.rawValue, ControlMessageType.webrtcIce.rawValue,
        ControlMessageType.endStream.rawValue, ControlMessageType.pinStream.rawValue,
    ]

    /// How many ended or declined session ids are remembered, so that the monitor's messages racing the end of a
    /// stream are dropped silently.
    static let rememberedEndedStreams = 64

    // MARK: public API

    /// Opens a live stream from a connected monitor: sends START_STREAM_REQUEST on the monitor's control connection
    /// and returns once the monitor accepted it. The monitor's offer is then answered by a receiver from the media
    /// engine, and ``ListenerEvent/streamStarted(monitorId:sessionId:mediaType:)`` follows when media flows.
    ///
    /// - Parameters:
    ///   - monitorId: A paired monitor this listener is connected to (``listen()`` is running).
    ///   - mediaType: Audio only, or audio and video.
    /// - Returns: The stream's session id (for ``pinStream(sessionId:)`` and ``endStream(sessionId:)``).
    /// - Throws: ``Failure`` when there is no media engine, the monitor is not connected, the monitor declines
    ///   (with its reason, e.g. it already streams to 4 listeners), or the link is lost before it answers;
    ///   `CancellationError` when the task is cancelled while waiting.
    public func openStream(monitorId: String, mediaType: MediaType) async throws -> String {
        guard mediaEngine != nil else {
            throw Failure(description: "this listener has no media pipeline: live streams are not available")
        }
        guard let link = links[monitorId] else {
            throw Failure(description: "not connected to monitor \(monitorId); is it running and in reach?")
        }
        let sessionId = UUID().uuidString.lowercased()
        let token = newToken()
        streams[sessionId] = LiveStream(monitorId: monitorId, mediaType: mediaType, automatic: false, token: token)
        let (outcomes, continuation) = AsyncStream.makeStream(
            of: StartOutcome.self, bufferingPolicy: .bufferingNewest(1))
        pendingStarts[sessionId] = PendingStart(monitorId: monitorId, order: token, outcome: continuation)
        do {
            try await link.connection.send(
                .startStreamRequest(
                    StartStreamRequest(
                        sessionId: sessionId,
                        mediaType: mediaType)))
        } catch {
            pendingStarts[sessionId] = nil
            forget(sessionId, token: token)
            throw Failure(description: "could not ask the monitor for a stream: \(error)")
        }
        var answers = outcomes.makeAsyncIterator()
        let outcome = await answers.next()
        pendingStarts[sessionId] = nil
        switch outcome {
        case .accepted?:
            return sessionId
        case .declined(let reason)?:
            forget(sessionId, token: token)
            throw Failure(description: "the monitor declined the stream: \(reason)")
        case nil:
            forget(sessionId, token: token)
            // Cancelled while waiting: the monitor may accept it all the same, so end it there too (harmless if not).
            try? await links[monitorId]?.connection.send(.endStream(StreamReference(sessionId: sessionId)))
            try Task.checkCancellation()
            throw Failure(description: "the link to the monitor was lost before it answered")
        }
    }

    /// Ends a stream from this side: stops its receiver, tells the monitor with END_STREAM and reports
    /// ``ListenerEvent/streamEnded(monitorId:sessionId:reason:)`` (`ended_by_listener`). Idempotent: an unknown or
    /// already ended stream is ignored.
    /// - Parameter sessionId: The stream to end.
    public func endStream(sessionId: String) async {
        guard let stream = forget(sessionId, token: nil) else { return }
        let link = links[stream.monitorId]
        link?.report.yield(.streamEnded(monitorId: stream.monitorId, sessionId: sessionId, reason: "ended_by_listener"))
        try? await link?.connection.send(.endStream(StreamReference(sessionId: sessionId)))
    }

    /// Keeps an automatic stream open until it is ended (PIN_STREAM cancels the monitor's auto-stop timer).
    /// - Parameter sessionId: A running stream.
    /// - Throws: ``Failure`` when the stream is not running or its monitor cannot be told.
    public func pinStream(sessionId: String) async throws {
        guard let stream = streams[sessionId], let link = links[stream.monitorId] else {
            throw Failure(description: "no stream \(sessionId) is running")
        }
        do {
            try await link.connection.send(.pinStream(StreamReference(sessionId: sessionId)))
        } catch {
            throw Failure(description: "could not pin the stream: \(error)")
        }
    }

    /// Acts on a safety alert (ALERT_ACTION): every listener of the monitor is told who is checking, that it is
    /// okay, or that this kind is muted for `minutes` (default 5) for everyone.
    /// - Throws: ``Failure`` when the monitor is not connected.
    public func act(_ action: AlertActionKind, on alertId: String, monitorId: String, minutes: Int? = nil) async throws
    {
        guard let link = links[monitorId] else {
            throw Failure(description: "not connected to monitor \(monitorId); the action could not be sent")
        }
        do {
            try await link.connection.send(
                .alertAction(AlertAction(alertId: alertId, action: action, minutes: minutes)))
        } catch {
            throw Failure(description: "could not send the action: \(error)")
        }
    }

    /// The streams running now (session ids), e.g. for a user interface.
    public var activeStreamIds: [String] {
        streams.keys.sorted()
    }

    // MARK: links

    func openLink(
        _ monitorId: String,
        connection: any ControlConnection,
        report: AsyncStream<ListenerEvent>.Continuation
    ) -> UInt64 {
        let token = newToken()
        links[monitorId] = Link(connection: connection, report: report, token: token)
        return token
    }

    /// The connection ended: its streams end with it (`link_lost`) and waiting `openStream` calls fail.
    func closeLink(_ monitorId: String, token: UInt64) {
        guard let link = links[monitorId], link.token == token else { return }
        links[monitorId] = nil
        for (sessionId, pending) in pendingStarts where pending.monitorId == monitorId {
            pendingStarts[sessionId] = nil
            pending.outcome.finish()
        }
        for sessionId in streams.keys.sorted() where streams[sessionId]?.monitorId == monitorId {
            forget(sessionId, token: nil)
            link.report.yield(.streamEnded(monitorId: monitorId, sessionId: sessionId, reason: "link_lost"))
        }
    }

    // MARK: messages from the monitor

    /// Handles a stream message from `monitorId`.
    /// - Returns: Whether the message was a stream message and is fully handled.
    func handleStreamMessage(_ message: ControlMessage, monitorId: String) async -> Bool {
        switch message {
        case .startStreamResponse(let response):
            guard let pending = pendingStarts[response.sessionId], pending.monitorId == monitorId else { return true }
            pendingStarts[response.sessionId] = nil
            pending.outcome.yield(response.accepted ? .accepted : .declined(response.reason ?? "no reason given"))
            pending.outcome.finish()
            return true
        case .webrtcOffer(let offer):
            await remoteOffer(offer, monitorId: monitorId)
            return true
        case .webrtcIce(let message):
            guard let stream = streams[message.sessionId], stream.monitorId == monitorId, let peer = stream.peer else {
                return true
            }
            // A candidate the engine refuses is not fatal: ICE goes on with the others.
            try? await peer.addRemoteCandidate(message.candidate)
            return true
        case .streamEndingSoon(let warning):
            guard streams[warning.sessionId]?.monitorId == monitorId else { return true }
            links[monitorId]?.report.yield(
                .streamEndingSoon(
                    monitorId: monitorId, sessionId: warning.sessionId,
                    secondsRemaining: warning.secondsRemaining))
            return true
        case .endStream(let reference):
            // Idempotent: the END_STREAM of a stream already ended here is ignored.
            guard streams[reference.sessionId]?.monitorId == monitorId else { return true }
            forget(reference.sessionId, token: nil)
            links[monitorId]?.report.yield(
                .streamEnded(
                    monitorId: monitorId, sessionId: reference.sessionId,
                    reason: "ended_by_monitor"))
            return true
        case .error(let error) where error.inReplyTo == ControlMessageType.startStreamRequest.rawValue:
            // The ERROR does not name the stream; the monitor answers in order, so it is the oldest request.
            let oldest = pendingStarts.filter { $0.value.monitorId == monitorId }.min {
                $0.value.order < $1.value.order
            }
            if let (sessionId, pending) = oldest {
                pendingStarts[sessionId] = nil
                pending.outcome.yield(.declined("\(error.error): \(error.message)"))
                pending.outcome.finish()
            }
            // An UNAUTHORIZED one means this listener is no longer trusted: the session loop handles that too.
            return error.errorCode != .unauthorized
        case .error(let error) where error.inReplyTo.map(Self.streamSignalingTypes.contains) == true:
            // About one stream (e.g. a late candidate), not about the pairing; the connection stays open.
            return true
        default:
            return false
        }
    }

    /// NOISE_EVENT named an automatic stream: open it if the `onNoise` setting says so, otherwise end it at once.
    func offeredAutomaticStream(_ sessionId: String, monitorId: String) async {
        guard streams[sessionId] == nil, !recentlyEnded.contains(sessionId) else { return }
        let action = stored("read what to do on a noise (it only notifies)", { try $0.listenerOnNoise() }) ?? .notify
        guard action == .open, mediaEngine != nil else {
            remember(sessionId)
            try? await links[monitorId]?.connection.send(.endStream(StreamReference(sessionId: sessionId)))
            return
        }
        streams[sessionId] = LiveStream(monitorId: monitorId, mediaType: nil, automatic: true, token: newToken())
    }

    /// NOISE_EVENT with no automatic stream (the monitor's auto-stream is off): with `onNoise` = `open` the listener
    /// asks for a sound stream of that monitor itself, unless one of it plays or is being opened already. Its
    /// outcome comes as the usual stream events (a refusal: nothing opens; the noise was shown all the same).
    func openOnNoise(monitorId: String) {
        guard mediaEngine != nil,
            stored("read what to do on a noise (it only notifies)", { try $0.listenerOnNoise() }) == .open,
            !streams.values.contains(where: { $0.monitorId == monitorId })
        else { return }
        Task { [weak self] in _ = try? await self?.openStream(monitorId: monitorId, mediaType: .audio) }
    }

    /// WEBRTC_OFFER: a receiver for the stream takes it and answers. An offer for no stream of ours (e.g. one this
    /// listener restarted without) is ended, so the monitor frees the sender.
    private func remoteOffer(_ offer: SessionDescription, monitorId: String) async {
        guard let stream = streams[offer.sessionId], stream.monitorId == monitorId else {
            if !recentlyEnded.contains(offer.sessionId) {
                remember(offer.sessionId)
                try? await links[monitorId]?.connection.send(.endStream(StreamReference(sessionId: offer.sessionId)))
            }
            return
        }
        guard stream.peer == nil, let mediaEngine else { return }
        let mediaType = stream.mediaType ?? (offer.sdp.contains("m=video") ? .audioVideo : .audio)
        do {
            let peer = try await mediaEngine.makeReceiver(sessionId: offer.sessionId, mediaType: mediaType)
            guard streams[offer.sessionId]?.token == stream.token else {
                await peer.stop()  // ended while the receiver was being made
                return
            }
            let sessionId = offer.sessionId
            let token = stream.token
            streams[sessionId]?.peer = peer
            streams[sessionId]?.mediaType = mediaType
            streams[sessionId]?.pump = Task { [weak self] in
                for await event in peer.events {
                    await self?.receiverEvent(event, sessionId: sessionId, token: token)
                }
            }
            // A stream that never flows (UDP blocked, ICE failing slowly) must not look open forever.
            let timeout = mediaStartTimeout
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.mediaStartTimedOut(sessionId, token: token, after: timeout)
            }
            try await peer.setRemoteDescription(sdp: offer.sdp)
        } catch {
            await mediaFailed(offer.sessionId, token: stream.token, reason: "\(error)")
        }
    }

    /// Relays what the receiver reports: its answer and candidates to the monitor, `streamStarted` when media flows.
    private func receiverEvent(_ event: MediaEvent, sessionId: String, token: UInt64) async {
        guard let stream = streams[sessionId], stream.token == token, let link = links[stream.monitorId] else { return }
        switch event {
        case .localDescription(let sdp):
            try? await link.connection.send(.webrtcAnswer(SessionDescription(sessionId: sessionId, sdp: sdp)))
        case .localCandidate(let candidate):
            try? await link.connection.send(.webrtcIce(IceCandidateMessage(sessionId: sessionId, candidate: candidate)))
        case .flowing:
            guard !stream.started else { return }
            streams[sessionId]?.started = true
            link.report.yield(
                .streamStarted(
                    monitorId: stream.monitorId, sessionId: sessionId,
                    mediaType: stream.mediaType ?? .audio))
        case .ended(let reason):
            await mediaFailed(sessionId, token: token, reason: reason)
        }
    }

    /// No media within ``mediaStartTimeout`` of the offer: the stream fails with a reason that says what to check.
    private func mediaStartTimedOut(_ sessionId: String, token: UInt64, after timeout: Duration) async {
        guard let stream = streams[sessionId], stream.token == token, !stream.started else { return }
        await mediaFailed(
            sessionId, token: token,
            reason: "no audio arrived within \(timeout.components.seconds) s: the network between the devices may "
                + "block UDP (firewall, guest Wi-Fi isolation); try --ice-address with this device's LAN address"
        )
    }

    /// The receiver failed: the stream ends here and the monitor is told.
    private func mediaFailed(_ sessionId: String, token: UInt64, reason: String) async {
        guard let stream = streams[sessionId], stream.token == token else { return }
        forget(sessionId, token: token)
        let link = links[stream.monitorId]
        link?.report.yield(
            .streamEnded(
                monitorId: stream.monitorId, sessionId: sessionId,
                reason: "media_failed: \(reason)"))
        try? await link?.connection.send(.endStream(StreamReference(sessionId: sessionId)))
    }

    // MARK: bookkeeping

    func newToken() -> UInt64 {
        nextToken += 1
        return nextToken
    }

    /// Removes a stream (only the one made with `token`, when given) and stops its receiver.
    /// - Returns: The removed stream.
    @discardableResult
    private func forget(_ sessionId: String, token: UInt64?) -> LiveStream? {
        guard let stream = streams[sessionId], token == nil || stream.token == token else { return nil }
        streams[sessionId] = nil
        remember(sessionId)
        if let peer = stream.peer {
            // The pump runs on until the receiver's `.ended`, which is then ignored (the stream is gone).
            Task { await peer.stop() }
        }
        return stream
    }

    private func remember(_ sessionId: String) {
        recentlyEnded.append(sessionId)
        if recentlyEnded.count > Self.rememberedEndedStreams { recentlyEnded.removeFirst() }
    }
}
