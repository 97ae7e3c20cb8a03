/// The monitor's live streams (seed 2.6, PROTOCOL.md §9) as a pure state machine with an injected clock.
///
/// - A duplicate `sessionId` → ERROR CONFLICT; `END_STREAM` is idempotent.
/// - At most 4 concurrent streams; a fifth request is answered `accepted: false`.
/// - An automatic stream (after a noise event) stops by itself after its duration; `STREAM_ENDING_SOON` is sent
///   before that, and `PIN_STREAM` cancels the timer.
public struct StreamSessions: Sendable {
    /// The most streams that run at once.
    public static let maxConcurrent = 4
    /// How long before an automatic stream ends STREAM_ENDING_SOON is sent (the 5 s). A stream that is not
    /// longer than this gets no separate warning.
    public static let endingSoonWarning: Duration = .seconds(5)
    /// Longest accepted session id.
    public static let maxSessionIdLength = 128

    /// Identifies a connection, as the service names it.
    public typealias ConnectionID = UInt64

    /// What the service must do.
    public enum Action: Sendable, Hashable {
        /// Send this message on the connection.
        case send(ControlMessage, to: ConnectionID)
        /// Start the media pipeline of this stream (the monitor then sends WEBRTC_OFFER).
        case startMedia(sessionId: String, mediaType: MediaType, connection: ConnectionID)
        /// Tear down the media pipeline of this stream.
        case stopMedia(sessionId: String)
    }

    /// A running stream.
    public struct Stream: Sendable, Hashable {
        public var sessionId: String
        public var connection: ConnectionID
        public var mediaType: MediaType
        /// When an automatic stream stops; nil for a user-started or pinned stream.
        public var autoStopAt: ContinuousClock.Instant?
        var warned: Bool
    }

    private var streams: [String: Stream] = [:]

    public init() {}

    /// The running streams.
    public var active: [Stream] { streams.values.sorted { $0.sessionId < $1.sessionId } }

    /// The running stream with this id, if any.
    /// - Parameter sessionId: The stream's id.
    /// - Returns: The stream (its connection says who owns it), or nil when no such stream runs.
    public func stream(_ sessionId: String) -> Stream? { streams[sessionId] }

    /// The next time `tick(now:)` has work to do, for the service's timer.
    public var nextDeadline: ContinuousClock.Instant? {
        streams.values.compactMap { stream -> ContinuousClock.Instant? in
            guard let stop = stream.autoStopAt else { return nil }
            return stream.warned ? stop : stop - Self.endingSoonWarning
        }.min()
    }

    /// START_STREAM_REQUEST from a trusted listener.
    public mutating func handleStart(_ request: StartStreamRequest, from connection: ConnectionID) -> [Action] {
        let sessionId = request.sessionId
        guard !sessionId.isEmpty, sessionId.utf8.count <= Self.maxSessionIdLength else {
            return [
                .send(
                    .error(
                        .protocolError, "sessionId must be 1 to \(Self.maxSessionIdLength) bytes",
                        inReplyTo: ControlMessageType.startStreamRequest.rawValue), to: connection)
            ]
        }
        guard streams[sessionId] == nil else {
            return [
                .send(
                    .error(
                        .conflict, "a stream with sessionId \(sessionId) already exists",
                        inReplyTo: ControlMessageType.startStreamRequest.rawValue), to: connection)
            ]
        }
        guard streams.count < Self.maxConcurrent else {
            let response = StartStreamResponse(
                sessionId: sessionId, accepted: false,
                reason: "the monitor is already streaming to \(Self.maxConcurrent) listeners"
            )
            return [.send(.startStreamResponse(response), to: connection)]
        }
        streams[sessionId] = Stream(
            sessionId: sessionId, connection: connection, mediaType: request.mediaType,
            autoStopAt: nil, warned: false)
        return [
            .send(.startStreamResponse(StartStreamResponse(sessionId: sessionId, accepted: true)), to: connection),
            .startMedia(sessionId: sessionId, mediaType: request.mediaType, connection: connection),
        ]
    }

    /// Starts an automatic stream after a noise event (its id goes into NOISE_EVENT.autoStreamSessionId).
    /// - Returns: The actions, or an empty list when the stream cannot start (id in use or at capacity).
    public mutating func startAutomatic(
        sessionId: String,
        mediaType: MediaType,
        to connection: ConnectionID,
        duration: Duration,
        now: ContinuousClock.Instant
    ) -> [Action] {
        guard streams[sessionId] == nil, streams.count < Self.maxConcurrent else { return [] }
        streams[sessionId] = Stream(
            sessionId: sessionId, connection: connection, mediaType: mediaType,
            autoStopAt: now + duration, warned: duration <= Self.endingSoonWarning)
        return [.startMedia(sessionId: sessionId, mediaType: mediaType, connection: connection)]
    }

    /// END_STREAM from the listener: idempotent, an unknown or already ended stream is not an error.
    public mutating func handleEnd(_ reference: StreamReference, from connection: ConnectionID) -> [Action] {
        guard let stream = streams[reference.sessionId], stream.connection == connection else { return [] }
        streams[reference.sessionId] = nil
        return [.stopMedia(sessionId: reference.sessionId)]
    }

    /// PIN_STREAM: the listener keeps the stream; its auto-stop timer is cancelled. Idempotent.
    public mutating func handlePin(_ reference: StreamReference, from connection: ConnectionID) -> [Action] {
        guard var stream = streams[reference.sessionId], stream.connection == connection else { return [] }
        stream.autoStopAt = nil
        streams[reference.sessionId] = stream
        return []
    }

    /// Ends a stream from the monitor's side (e.g. the user stops it, or media failed).
    public mutating func end(sessionId: String) -> [Action] {
        guard let stream = streams.removeValue(forKey: sessionId) else { return [] }
        return [
            .send(.endStream(StreamReference(sessionId: sessionId)), to: stream.connection),
            .stopMedia(sessionId: sessionId),
        ]
    }

    /// Time passed: warns and stops automatic streams whose time is up.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for stream in active {
            guard let stop = stream.autoStopAt else { continue }
            if now >= stop {
                actions += end(sessionId: stream.sessionId)
            } else if !stream.warned, now >= stop - Self.endingSoonWarning {
                streams[stream.sessionId]?.warned = true
                let seconds = max(1, Int(((stop - now) / .seconds(1)).rounded(.up)))
                actions.append(
                    .send(
                        .streamEndingSoon(
                            StreamEndingSoon(
                                sessionId: stream.sessionId,
                                secondsRemaining: seconds)),
                        to: stream.connection))
            }
        }
        return actions
    }

    /// A connection closed: its streams stop (nothing to send).
    public mutating func connectionClosed(_ connection: ConnectionID) -> [Action] {
        let ending = active.filter { $0.connection == connection }
        for stream in ending { streams[stream.sessionId] = nil }
        return ending.map { .stopMedia(sessionId: $0.sessionId) }
    }
}
