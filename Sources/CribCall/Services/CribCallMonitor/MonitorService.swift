public import ControlTransport
import CribCallControl
public import CribCallDiscovery
public import CribCallProtocol
public import CribCallStore
public import DeviceIdentity
public import Foundation
public import Logging
public import ServiceDiscovery
public import SoundDetection
public import StreamMedia

/// The monitor (seed use cases 1–4, 7; PROTOCOL.md §4–9): serves control connections, pairs listeners by QR code
/// or PIN, logs noise events and sends them to every connected trusted listener, replays missed events, closes
/// a revoked listener's sessions at once — also when it was revoked by another process sharing the database — and
/// signals live streams (WebRTC over the control channel; see `MonitorService+Streams.swift` and the README).
///
/// The service composes the pure state machines of CribCallProtocol with a transport (`ControlListener`) and the
/// store; it owns no socket itself, so tests run it over the in-memory transport as well as over QUIC.
public actor MonitorService {
    /// Events for the user interface, in order.
    public nonisolated let events: AsyncStream<MonitorEvent>
    let emit: AsyncStream<MonitorEvent>.Continuation

    private let identity: DeviceIdentity
    let database: CribCallDatabase
    private let transport: any ControlListener
    let wallClock: @Sendable () -> Date
    /// The program's logger: how connections come and go, at debug, with `connection` (and `listener`) metadata.
    let logger: Logger
    private let trusted = TrustedSet()
    private var qr = QRPairingVerifier()
    private var pin: PINPairingMonitor
    var sessions: [UInt64: Session] = [:]
    private var nextConnection: UInt64 = 1
    /// The highest event `seq` handed out, logged or not (an event the full disk kept out of the log keeps its seq,
    /// so the next logged one comes after it).
    private var lastSeq: Int64
    private var pinExpiry: Task<Void, Never>?
    var settings: MonitorSettings
    /// Why safety alerts are held back (``holdSafetyAlerts(_:)``), or nil.
    var safetyAlertsHeld: String?
    private var advertisement: MonitorAdvertisementHandle?
    /// Reads of the store that failed and have not worked since: each is said once, not every poll.
    private var reads = StoreAttempts()

    // Live streams (MonitorService+Streams.swift).
    let mediaEngine: (any MediaEngine)?
    let streamClock: any StreamClock
    var streams = StreamSessions()
    var media: [String: MediaSlot] = [:]
    var nextMediaToken: UInt64 = 0
    var streamTimer: (task: Task<Void, Never>, deadline: ContinuousClock.Instant, generation: UInt64)?
    var nextTimerGeneration: UInt64 = 0
    var recentlyEnded: [String] = []

    // Safety detections (MonitorService+Safety.swift), while a camera is watched.
    var safety: SafetyRun?

    /// The microphone's level (0…100) in the latest chunk the sound detection heard, for level meters; nil before
    /// any sound was heard.
    public internal(set) var soundLevel: Int?

    struct Session {
        let connection: any ControlConnection
        /// The service's logger with this connection's metadata.
        var logger: Logger
        var listenerId: String?
        /// Messages that are not direct replies (noise events, stream signaling), in order.
        let outbox: Outbox
        /// While the peer is not trusted: closes the connection unless it pairs in time (``pairingGrace``).
        var strangerDeadline: Task<Void, Never>?
        /// Whether its connection was reported (`listenerConnected`); a stranger counted by ``StrangerLog`` was not,
        /// and neither is its disconnection.
        var announced = true
    }

    /// How long a connection whose certificate is not trusted may stay without pairing: from connecting, and from
    /// each pairing message (at least the PIN session's 60 s then, for a person typing the PIN). Its slot is then
    /// free for someone else (issue: connection-slot exhaustion).
    let pairingGrace: Duration
    /// Unpaired connections, reported the first of each burst and then summed up.
    private var strangers: StrangerLog
    private var strangerSummary: Task<Void, Never>?

    /// - Parameters:
    ///   - identity: The monitor's device identity (the transport must present the same certificate).
    ///   - database: The monitor's store: trusted listeners, settings, event log, PIN-failure counter.
    ///   - transport: Where listeners connect.
    ///   - wallClock: The time stamped on events (injected for tests).
    ///   - mediaEngine: Makes the WebRTC senders of live streams (the `Media` adapter); nil: START_STREAM_REQUEST is
    ///     answered `accepted: false` and noise events start no automatic stream.
    ///   - streamClock: The time automatic streams run on (injected for tests).
    ///   - pairingGrace: How long an untrusted connection may stay without pairing (30 s).
    ///   - strangerReportWindow: Unpaired connections after the first within this window are summed up in one
    ///     `unpairedConnections` event when it has passed (10 s; see ``StrangerLog``).
    ///   - logger: The program's logger (debug: connections, refusals, strangers closed after the grace).
    public init(
        identity: DeviceIdentity,
        database: CribCallDatabase,
        transport: any ControlListener,
        wallClock: @escaping @Sendable () -> Date = Date.init,
        mediaEngine: (any MediaEngine)? = nil,
        streamClock: any StreamClock = SystemStreamClock(),
        pairingGrace: Duration = .seconds(30),
        strangerReportWindow: Duration = .seconds(10),
        logger: Logger = Logger(label: "cribcall")
    ) throws {
        self.logger = logger
        self.pairingGrace = pairingGrace
        strangers = StrangerLog(window: strangerReportWindow)
        self.identity = identity
        self.database = database
        self.transport = transport
        self.wallClock = wallClock
        self.mediaEngine = mediaEngine
        self.streamClock = streamClock
        (events, emit) = AsyncStream.makeStream(of: MonitorEvent.self)
        pin = PINPairingMonitor(failedSessionsInARow: try database.pinPairingFailures())
        settings = try database.monitorSettings()
        trusted.replace(with: try Self.trustedEntries(database))
        lastSeq = try database.lastEventSeq()
    }

    private var monitorId: String { identity.deviceId.uuidString.lowercased() }

    /// Serves until the transport stops accepting connections (then every session has ended).
    /// - Parameter showingQR: Show a pairing QR code right after announcing `ready`.
    public func run(showingQR: Bool = false) async {
        emit.yield(
            .ready(
                monitorId: monitorId, monitorName: settings.monitorName,
                certFingerprint: identity.fingerprint.hex, port: transport.port))
        if showingQR { showQR() }
        let watcher = Task { [weak self] in await self?.watchStore() }
        // History (the app's Tonight / Last Night) knows when the monitor ran; a run cut by a power loss ends where
        // it was last seen, within a minute.
        let run = MonitoringRun(database: database, clock: wallClock) { [emit] what, error in
            if let error { emit.yield(.storeFailed(what: what, reason: "\(error)")) }
        }
        pruneEventLog()
        await withDiscardingTaskGroup { group in
            for await connection in transport.connections {
                let (id, logger) = register(connection)
                group.addTask { await self.serve(connection, id: id, logger: logger) }
            }
        }
        watcher.cancel()
        run?.end()
        emit.finish()
    }

    // MARK: sessions

    /// Starts the session of a new connection. - Returns: Its id and its logger.
    private func register(_ connection: any ControlConnection) -> (UInt64, Logger) {
        let id = nextConnection
        nextConnection += 1
        let listenerId = trusted.listenerId(for: connection.peer.fingerprint)
        var log = logger
        log[metadataKey: "connection"] = "\(id)"
        if let listenerId { log[metadataKey: "listener"] = "\(listenerId.prefix(8))" }
        log.debug(
            "\(listenerId == nil ? "unpaired device" : "paired listener") connected from \(Self.host(of: connection.remoteAddress))"
        )
        sessions[id] = Session(
            connection: connection, logger: log, listenerId: listenerId, outbox: Outbox(connection: connection))
        if listenerId != nil {
            connection.markTrusted()
        } else {
            armStrangerDeadline(id, after: pairingGrace)
        }
        // A paired listener learns whether monitoring is on, and the safety judgement, as soon as its control
        // stream is open (PROTOCOL.md §11).
        if listenerId != nil, let outbox = sessions[id]?.outbox { sendState(to: outbox) }
        var announced = true
        if listenerId == nil {
            reportStrangers()
            announced = strangers.connected(at: .now)
            if !announced { scheduleStrangerSummary() }
        }
        sessions[id]?.announced = announced
        if announced {
            emit.yield(
                .listenerConnected(
                    certFingerprint: connection.peer.fingerprint.hex, listenerId: listenerId,
                    trusted: listenerId != nil))
        }
        return (id, log)
    }

    /// Sums up the strangers of a window that has passed, if any.
    private func reportStrangers() {
        guard let count = strangers.summary(at: .now) else { return }
        emit.yield(.unpairedConnections(count: count, within: strangers.window))
    }

    /// Sums up the current window's strangers when it ends (once per window).
    private func scheduleStrangerSummary() {
        guard strangerSummary == nil, let end = strangers.windowEnd else { return }
        strangerSummary = Task { [weak self] in
            try? await Task.sleep(until: end, clock: .continuous)
            await self?.strangerWindowEnded()
        }
    }

    private func strangerWindowEnded() {
        strangerSummary = nil
        reportStrangers()
        // Woken late, after a newer window had begun and counted strangers of its own: their summary is due too.
        if strangers.counted > 0 { scheduleStrangerSummary() }
    }

    private nonisolated func serve(_ connection: any ControlConnection, id: UInt64, logger: Logger) async {
        let trusted = self.trusted
        let fingerprint = connection.peer.fingerprint
        let session = ControlSession(connection: connection, role: .monitor, logger: logger) {
            trusted.listenerId(for: fingerprint) != nil ? .trusted : .untrusted
        }
        let reason = await session.run { message in
            await self.handle(message, connection: id)
        }
        await ended(id, reason: reason)
    }

    /// Closes the untrusted connection `id` after `delay` unless it is trusted by then (or pairs again: re-armed).
    private func armStrangerDeadline(_ id: UInt64, after delay: Duration) {
        sessions[id]?.strangerDeadline?.cancel()
        sessions[id]?.strangerDeadline = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.strangerTimedOut(id)
        }
    }

    private func strangerTimedOut(_ id: UInt64) {
        guard let session = sessions[id], session.listenerId == nil else { return }
        let connection = session.connection
        let seconds = pairingGrace.components.seconds
        session.logger.debug("closing: not paired within \(seconds) s")
        Task {
            try? await connection.send(
                .error(
                    .unauthorized,
                    "this device is not paired: pair within \(seconds) s of connecting (by QR code or PIN), then "
                        + "connect again"))
            await connection.close(.unauthorized)
        }
    }

    /// The session `id` is now a paired listener's: the transport counts it no longer as a stranger.
    private func becameTrusted(_ id: UInt64, listenerId: String) {
        sessions[id]?.listenerId = listenerId
        sessions[id]?.logger[metadataKey: "listener"] = "\(listenerId.prefix(8))"
        sessions[id]?.logger.debug("paired")
        sessions[id]?.strangerDeadline?.cancel()
        sessions[id]?.strangerDeadline = nil
        sessions[id]?.connection.markTrusted()
    }

    private func ended(_ id: UInt64, reason: ConnectionCloseReason) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        session.logger.debug("disconnected: \(reason)")
        session.strangerDeadline?.cancel()
        _ = perform(pin.connectionClosed(id, now: .now))
        perform(streams.connectionClosed(id), endReason: StreamEndReason.connectionClosed)
        session.outbox.finish()
        guard session.announced || session.listenerId != nil else { return }
        emit.yield(
            .listenerDisconnected(
                certFingerprint: session.connection.peer.fingerprint.hex,
                listenerId: session.listenerId, reason: "\(reason)"))
    }

    private func context(for connection: any ControlConnection) -> PairingContext {
        PairingContext(
            monitorId: identity.deviceId, monitorFingerprint: identity.fingerprint,
            clientFingerprint: connection.peer.fingerprint, clientPublicKeySPKI: connection.peer.publicKeySPKI,
            clientAddress: Self.host(of: connection.remoteAddress))
    }

    /// The IP of `HOST:PORT` or `[V6]:PORT` (the whole text when there is no port).
    static func host(of address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        guard address.filter({ $0 == ":" }).count == 1, let colon = address.lastIndex(of: ":") else { return address }
        return String(address[..<colon])
    }

    // MARK: messages

    private func handle(_ message: ControlMessage, connection id: UInt64) async -> [ControlSession.Action] {
        guard let session = sessions[id] else { return [] }
        let now = ContinuousClock.now
        if session.listenerId == nil {
            switch message {
            case .pairRequest, .pinPairingInit, .pinSubmit:
                // Pairing under way: time for the person to read and type the PIN.
                armStrangerDeadline(id, after: max(pairingGrace, PINPairingMonitor.sessionLifetime + .seconds(5)))
            default:
                break
            }
        }
        switch message {
        case .ping(let ping):
            // Through the outbox: the PONG follows everything queued for this listener before the PING.
            session.outbox.send(.pong(ping))
            return []
        case .pairRequest(let request):
            switch qr.handle(request, context: context(for: session.connection), now: now) {
            case .accepted(let listener, let reply):
                if let refusal = trust(listener, method: "qr", pairedOn: id) {
                    return [.send(refusal), .close(.unauthorized)]
                }
                accept(.pairAccepted(reply), connection: id, listenerId: listener.listenerId)
                return []
            case .rejected(let rejection):
                emit.yield(.pairingFailed(reason: rejection.reason.rawValue))
                return [.send(.pairRejected(rejection)), .close(.unauthorized)]
            }
        case .pinPairingInit(let request):
            return perform(pin.handleInit(request, context: context(for: session.connection), connection: id, now: now))
        case .pinSubmit(let submit):
            return perform(
                pin.handleSubmit(submit, context: context(for: session.connection), connection: id, now: now),
                connection: id)
        case .eventsSince(let request):
            // Everything the log still keeps after afterSeq, in order and before anything queued later (a live
            // event then cannot move the listener's lastSeq past what it has not been sent yet), a page at a time.
            let database = database
            let monitorId = monitorId
            let emit = emit
            session.outbox.replay(after: request.afterSeq) { cursor in
                guard cursor != .max else { return ([], cursor) }  // told it failed: over
                do {
                    let records = try database.noiseEvents(afterSeq: cursor, limit: Self.replayPage)
                    return (records.map { $0.replayMessage(monitorId: monitorId) }, records.last?.seq ?? cursor)
                } catch {
                    emit.yield(.storeFailed(what: "read its event log to replay missed alerts", reason: "\(error)"))
                    let told = ControlMessage.error(
                        .internalError,
                        "the monitor could not read its event log: alerts missed while the link was down cannot be "
                            + "replayed now", inReplyTo: "EVENTS_SINCE")
                    return ([told], .max)
                }
            }
            return []
        case .alertAction(let action):
            guard let listenerId = session.listenerId else { return [] }
            return handleAlertAction(action, from: listenerId)
        case .unpair(let request):
            guard let listenerId = session.listenerId, request.listenerId == listenerId else {
                return [.send(.error(.unauthorized, "a listener can only unpair itself", inReplyTo: "UNPAIR"))]
            }
            do {
                _ = try database.revokeListener(id: listenerId)
            } catch {
                // Not forgotten: saying UNPAIRED would leave a pairing the listener believes is gone.
                emit.yield(
                    .storeFailed(
                        what: "forget the listener \(listenerId) (it asked to be unpaired)", reason: "\(error)"))
                return [
                    .send(
                        .error(
                            .internalError, "the monitor could not forget this listener; it is still paired: try again",
                            inReplyTo: "UNPAIR"))
                ]
            }
            // This connection's answer is UNPAIRED alone: an ERROR racing it would read as a refusal.
            reloadTrust(answering: id)
            return [.send(.unpaired(Unpaired(listenerId: listenerId))), .close(.ok)]
        case .startStreamRequest(let request):
            return handleStart(request, connection: id)
        case .webrtcAnswer(let answer):
            return await handleAnswer(answer, connection: id)
        case .webrtcIce(let candidate):
            return await handleCandidate(candidate, connection: id)
        case .endStream(let reference):
            return handleEnd(reference, connection: id)
        case .pinStream(let reference):
            return handlePin(reference, connection: id)
        default:
            return []
        }
    }

    /// Performs the PIN machine's actions that are the service's own and returns those for the session.
    /// Carries out the PIN pairing's actions; what is for the session of `connection` (the one whose message
    /// produced them) is returned, except its PAIR_ACCEPTED (see ``accept(_:connection:listenerId:)``).
    private func perform(_ actions: [PINPairingMonitor.Action], connection: UInt64? = nil) -> [ControlSession.Action] {
        // The PIN to show comes after the PIN_REQUIRED it belongs to: take it first.
        for case .showPIN(let shown, let expiresAt) in actions {
            lastShownPIN = shown.digits
            schedulePINExpiry(at: expiresAt)
        }
        var forSession: [ControlSession.Action] = []
        var paired: TrustedListener?
        for action in actions {
            switch action {
            case .send(.pairAccepted(let accepted)):
                if let connection, let paired {
                    accept(.pairAccepted(accepted), connection: connection, listenerId: paired.listenerId)
                } else {
                    forSession.append(.send(.pairAccepted(accepted)))
                }
            case .send(let message):
                if case .pairRejected(let rejection) = message {
                    emit.yield(.pairingFailed(reason: rejection.reason.rawValue))
                }
                if case .pinRequired(let required) = message, let shown = lastShownPIN {
                    emit.yield(
                        .pin(
                            pin: shown, pairingSessionId: required.pairingSessionId,
                            expiresInSec: required.expiresInSec, attemptsRemaining: required.maxAttempts))
                }
                forSession.append(.send(message))
            case .close(let code):
                forSession.append(.close(code))
            case .showPIN:
                break
            case .hidePIN:
                lastShownPIN = nil
                emit.yield(.pinHidden)
            case .scheduleExpiry(let deadline):
                schedulePINExpiry(at: deadline)
            case .trust(let listener):
                if let refusal = trust(listener, method: "pin", pairedOn: connection) {
                    forSession.append(.send(refusal))
                } else {
                    paired = listener
                }
            case .persistFailedSessions(let count):
                do {
                    try database.setPinPairingFailures(count)
                } catch {
                    // The lock holds while this process runs; only a restart would forget the count.
                    emit.yield(
                        .storeFailed(
                            what: "save the count of failed PIN pairings (\(count)); a restart would forget it",
                            reason: "\(error)"))
                }
            }
        }
        return forSession
    }

    private var lastShownPIN: String?

    private func schedulePINExpiry(at deadline: ContinuousClock.Instant) {
        pinExpiry?.cancel()
        pinExpiry = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.expirePIN()
        }
    }

    private func expirePIN() {
        _ = perform(pin.expire(now: .now))
    }

    /// Stores a newly paired listener and trusts its sessions from the next message on. Its other sessions get
    /// events at once; the one it paired on (`pairedOn`) once its PAIR_ACCEPTED is queued
    /// (``accept(_:connection:listenerId:)``). A certificate it replaces (the same device re-paired) is no longer
    /// trusted from now on: its sessions are closed.
    /// - Returns: nil when trusted; otherwise the ERROR to answer (the id belongs to another device, or the
    ///   pairing could not be saved).
    private func trust(_ listener: TrustedListener, method: String, pairedOn: UInt64?) -> ControlMessage? {
        do {
            try database.trustListener(listener, at: wallClock())
        } catch CribCallStoreError.listenerIdTaken {
            emit.yield(.pairingFailed(reason: "listener_id_taken"))
            return .error(
                .conflict,
                "another device is paired under this listener id; revoke it on the monitor, or pair with a new id")
        } catch {
            return .error(.internalError, "the monitor could not save the pairing")
        }
        reloadTrust()
        for (id, session) in sessions where session.connection.peer.fingerprint == listener.fingerprint {
            if id != pairedOn { becameTrusted(id, listenerId: listener.listenerId) }
        }
        emit.yield(
            .paired(
                listenerId: listener.listenerId, listenerName: listener.name,
                certFingerprint: listener.fingerprint.hex, method: method))
        return nil
    }

    /// Queues PAIR_ACCEPTED on the connection that paired, then lets events reach it: both go through the
    /// session's outbox in order, so a noise event detected while pairing never arrives before the listener learns
    /// it is paired (a reply returned to the ControlSession could be overtaken by the outbox).
    private func accept(_ acceptance: ControlMessage, connection id: UInt64, listenerId: String) {
        guard let session = sessions[id] else { return }
        session.outbox.send(acceptance)
        becameTrusted(id, listenerId: listenerId)
        sendState(to: session.outbox)
    }

    /// MONITOR_STATE, then SAFETY_STATUS when a camera is watched: what a listener must know before any event.
    private func sendState(to outbox: Outbox) {
        outbox.send(.monitorState(monitorState))
        if let status = currentSafetyStatus() { outbox.send(.safetyStatus(status)) }
    }

    /// Whether monitoring is switched on, as MONITOR_STATE says it.
    var monitorState: MonitorState { MonitorState(monitoring: settings.monitoring ? .on : .off) }

    /// Why a stream is refused while monitoring is switched off.
    static let monitoringOffReason =
        "monitoring is turned off at the monitor: start monitoring there to listen or watch"

    // MARK: QR codes

    /// Shows a QR code with a fresh one-time token (valid for `lifetime`, at most 5 minutes).
    @discardableResult
    public func showQR(lifetime: Duration = QRPairingVerifier.maxTokenLifetime, port: Int? = nil) -> QRPairingPayload {
        let token = PairingToken.random()
        qr.show(token: token, now: .now, lifetime: lifetime)
        let payload = QRPairingPayload(
            monitorId: monitorId, monitorName: settings.monitorName, monitorCertFingerprint: identity.fingerprint.hex,
            monitorPublicKey: Data(identity.publicKeySPKI).base64EncodedString(),
            service: .init(defaultPort: port ?? transport.port), pairingToken: token)
        emit.yield(.qr(payload: payload, text: payload.qrText))
        return payload
    }

    /// Stops showing the QR code; its token dies.
    public func hideQR() {
        qr.hide()
    }

    /// Announces the monitor on the LAN (PROTOCOL.md §10: both service types, TXT with id, name, fingerprint,
    /// version and port). Discovery is only a convenience: listeners trust the pinned fingerprint, never the TXT.
    /// - Throws: `ServiceDiscoveryError` (e.g. no Avahi daemon) — the monitor works on without advertising.
    /// The advertisement follows renames (`cribcall settings set name=…`) while the monitor runs.
    public func advertise(using advertiser: any ServiceAdvertiser) async throws -> MonitorAdvertisementHandle {
        let handle = try await advertiser.advertise(advertisement(named: settings.monitorName))
        advertisement = handle
        return handle
    }

    private func advertisement(named name: String) -> MonitorAdvertisement {
        MonitorAdvertisement(
            monitorId: monitorId, monitorName: name, certFingerprint: identity.fingerprint.hex,
            port: transport.port)
    }

    // MARK: settings

    /// The detection settings in force: they follow `cribcall settings set` from another process within a second.
    public var detectorConfiguration: SoundDetectorConfiguration {
        settings.detectorConfiguration
    }

    /// The settings in force.
    public var currentSettings: MonitorSettings {
        settings
    }

    /// Applies settings changed in the store (by this or another process): detection picks them up through
    /// ``detectorConfiguration``, and a new name is announced on the LAN.
    private func reloadSettings() async {
        guard let stored = read("read its settings", { try $0.monitorSettings() }), stored != settings else { return }
        let renamed = stored.monitorName != settings.monitorName
        let switched = stored.monitoring != settings.monitoring
        settings = stored
        emit.yield(.settingsChanged(stored))
        applySafetySettings()
        if switched { monitoringSwitched() }
        if renamed, let advertisement {
            try? await advertisement.update(self.advertisement(named: stored.monitorName))
        }
    }

    /// Monitoring was switched on or off (here or by another process): every paired listener is told, and streams
    /// end when it is off — a switched-off monitor sends nothing.
    private func monitoringSwitched() {
        emit.yield(.monitoringSwitched(on: settings.monitoring))
        for session in sessions.values where session.listenerId != nil {
            session.outbox.send(.monitorState(monitorState))
        }
        guard !settings.monitoring else { return }
        for stream in streams.active {
            perform(streams.end(sessionId: stream.sessionId), endReason: StreamEndReason.monitoringOff)
        }
    }

    /// Takes up settings this process stored (another process's changes are noticed by themselves).
    public func applyStoredSettings() async {
        await reloadSettings()
    }

    /// Re-enables PIN pairing after the lockout.
    public func unlockPINPairing() {
        _ = perform(pin.unlock())
    }

    // MARK: the event log

    /// Events replayed per read of the log.
    static let replayPage = 500
    /// How often (in events written) the log is pruned.
    static let prunePeriod: Int64 = 64

    /// Prunes the event log by PROTOCOL.md §8 (kept: the last 1,000, or 24 h) at start and every ``prunePeriod``
    /// events written, so it never grows past what a replay may send.
    func pruneEventLog(afterWriting seq: Int64? = nil) {
        guard seq.map({ $0 % Self.prunePeriod == 0 }) ?? true else { return }
        do {
            _ = try database.pruneNoiseEvents(keepLast: 1000, newerThan: wallClock().addingTimeInterval(-86_400))
        } catch {
            emit.yield(.storeFailed(what: "prune its event log (it keeps growing)", reason: "\(error)"))
        }
    }

    // MARK: noise

    /// Logs a detection and sends NOISE_EVENT to every connected trusted listener.
    ///
    /// With the `autoStream` setting on (and a media engine), each connected trusted listener that has no stream
    /// running gets an automatic stream of `autoStreamSec` seconds: its NOISE_EVENT carries that stream's
    /// `autoStreamSessionId`, and the WEBRTC_OFFER follows (PROTOCOL.md §9; the listener ends it with END_STREAM
    /// if it does not want it — see the README). The event log keeps no `autoStreamSessionId`: a replayed event
    /// must not name a stream that is over.
    /// - Returns: The event as logged (without `autoStreamSessionId`, which differs per listener).
    @discardableResult
    public func reportNoise(_ detection: NoiseDetection, kind: String = "noise") throws -> NoiseEvent {
        let timestamp = Int64((wallClock().timeIntervalSince1970 * 1000).rounded())
        let record = try log(
            NoiseEventRecord(
                seq: 0, eventId: UUID().uuidString.lowercased(), kind: kind, timestamp: timestamp,
                peakLevel: detection.peakLevel, autoStreamSessionId: nil))
        let event = record.message(monitorId: monitorId)
        emit.yield(.noise(seq: record.seq, eventId: record.eventId, peakLevel: record.peakLevel, timestamp: timestamp))
        for id in sessions.keys.sorted() where sessions[id]?.listenerId != nil {
            sendNoise(event, to: id)
        }
        return event
    }

    /// Logs an event with the next `seq` and prunes the log. When the log cannot be written (the disk is full, an
    /// I/O error), the event keeps that `seq` and still goes out live: an alert is never held back by its log.
    /// - Throws: ``CribCallStoreError/duplicateEventId(_:)`` (an id reused: a bug), nothing else.
    func log(_ event: NoiseEventRecord) throws -> NoiseEventRecord {
        do {
            let stored = try database.appendEvent(event, seqAtLeast: lastSeq + 1)
            lastSeq = stored.seq
            pruneEventLog(afterWriting: stored.seq)
            return stored
        } catch let error as CribCallStoreError {
            if case .duplicateEventId = error { throw error }
            return unlogged(event, reason: error.description)
        } catch {
            return unlogged(event, reason: "the event log cannot be written (\(error))")
        }
    }

    private func unlogged(_ event: NoiseEventRecord, reason: String) -> NoiseEventRecord {
        lastSeq += 1
        var kept = event
        kept.seq = lastSeq
        emit.yield(.eventNotLogged(seq: lastSeq, reason: reason))
        return kept
    }

    // MARK: revocation

    /// Re-reads the trusted listeners and closes, with UNAUTHORIZED, the sessions of any no longer trusted.
    public func reloadTrust() {
        reloadTrust(answering: nil)
    }

    /// ``reloadTrust()``, except that the connection `answering` (one that asked to be unpaired, and is answered
    /// and closed by its caller) is only marked untrusted.
    private func reloadTrust(answering: UInt64?) {
        guard let entries = read("read its paired listeners", Self.trustedEntries) else { return }
        trusted.replace(with: entries)
        for (id, session) in sessions {
            guard let listenerId = session.listenerId, entries[session.connection.peer.fingerprint] == nil else {
                continue
            }
            sessions[id]?.listenerId = nil
            emit.yield(.listenerRevoked(listenerId: listenerId))
            if id == answering { continue }
            let connection = session.connection
            Task {
                try? await connection.send(
                    .error(.unauthorized, "this listener was unpaired on the monitor; pair again"))
                await connection.close(.unauthorized)
            }
        }
    }

    /// Polls the database's change counter (cheap) so a revocation, an unlock or a settings change made by another
    /// process takes effect within half a second.
    private func watchStore() async {
        var version = read("watch its database for changes", { try $0.dataVersion() })
        // Changes made between `init` and now (e.g. `cribcall settings set` right after start) count too.
        reloadTrust()
        reloadPINLock()
        await reloadSettings()
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let current = read("watch its database for changes", { try $0.dataVersion() })
            if current != version {
                version = current
                reloadTrust()
                reloadPINLock()
                await reloadSettings()
            }
        }
    }

    /// `cribcall pairing unlock` from another process resets the stored counter: unlock here too.
    private func reloadPINLock() {
        guard pin.isLocked, read("read the count of failed PIN pairings", { try $0.pinPairingFailures() }) == 0 else {
            return
        }
        _ = perform(pin.unlock())
    }

    /// A read of the store: its value, or nil when it failed, which is said (``MonitorEvent/storeFailed(what:reason:)``)
    /// once until the same read works again (the store is polled every 250 ms).
    func read<Value>(_ what: String, _ body: (CribCallDatabase) throws -> Value) -> Value? {
        let (database, emit) = (database, emit)
        return reads.attempt(
            what, { try body(database) },
            firstFailure: { what, error in emit.yield(.storeFailed(what: what, reason: "\(error)")) })
    }

    private static func trustedEntries(_ database: CribCallDatabase) throws -> [CertificateFingerprint: String] {
        Dictionary(try database.trustedListeners().map { ($0.fingerprint, $0.listenerId) }) { first, _ in first }
    }
}
