public import ControlTransport
import CribCallDiscovery
public import CribCallProtocol
public import CribCallStore
public import DeviceIdentity
import Foundation
public import Logging
public import ServiceDiscovery
public import StreamMedia
import Synchronization

/// The listener app (seed use cases 2–4; PROTOCOL.md §5–8): pairs with monitors by PIN or QR code, then keeps a
/// control connection to every paired monitor — PING every 5 s, link lost after 15 s of silence, reconnect with
/// backoff (0.5 s … 10 s), then EVENTS_SINCE so no alert is lost. While connected it opens, pins and ends live
/// streams (PROTOCOL.md §9) over the same connection, and opens a monitor's automatic stream when the listener's
/// `onNoise` setting says `open` (see `ListenerService+Streams.swift`).
public actor ListenerService {
    /// Errors a person can act on.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    private let identity: DeviceIdentity
    private let name: String
    let database: CribCallDatabase
    private let connector: any ControlConnector

    // Live streams (ListenerService+Streams.swift).
    let mediaEngine: (any MediaEngine)?
    var links: [String: Link] = [:]
    var streams: [String: LiveStream] = [:]
    var pendingStarts: [String: PendingStart] = [:]
    var nextToken: UInt64 = 0
    var recentlyEnded: [String] = []
    /// The last MONITOR_STATE of each monitor in this run, so that a reconnection repeats nothing.
    private var monitoringKnown: [String: MonitoringSwitch] = [:]
    /// While ``listen(keepOpen:)`` runs: where events go, and the monitors followed.
    private var reporting: (AsyncStream<ListenerEvent>.Continuation, keepOpen: Bool)?
    /// Work on the store that failed and has not worked since: each is said once, not on every try.
    private var storeWork = StoreAttempts()
    private var following: [String: (token: UInt64, task: Task<Void, Never>)] = [:]

    /// Finds a followed monitor that moved (a new DHCP lease, a restart on another port) by the id and fingerprint
    /// its mDNS announcement carries; nil: only the stored address is tried.
    private var finder: (any ServiceBrowser)?
    /// How long one look for a moved monitor browses.
    static let rediscoveryTime: Duration = .seconds(3)

    /// How often it pings, when a link counts as lost, how long a stream may wait for media.
    public struct Timings: Sendable, Hashable {
        /// Keep-alive interval (PROTOCOL.md §6: 5 s).
        public var pingInterval: Duration
        /// Silence that counts as a lost link (PROTOCOL.md §6: 15 s).
        public var linkTimeout: Duration
        /// How long an accepted stream may go without media before it is ended as failed (ICE or UDP blocked).
        public var mediaStartTimeout: Duration

        /// The product's: what every `cribcall listen` and app runs with.
        public static let standard = Timings(
            pingInterval: .seconds(5), linkTimeout: .seconds(15), mediaStartTimeout: .seconds(15))

        public init(pingInterval: Duration, linkTimeout: Duration, mediaStartTimeout: Duration) {
            self.pingInterval = pingInterval
            self.linkTimeout = linkTimeout
            self.mediaStartTimeout = mediaStartTimeout
        }
    }

    /// The timings it runs with (``Timings/standard`` unless a test of the logic above the link asks otherwise).
    public let timings: Timings
    /// The program's logger.
    let logger: Logger
    var pingInterval: Duration { timings.pingInterval }
    var linkTimeout: Duration { timings.linkTimeout }
    var mediaStartTimeout: Duration { timings.mediaStartTimeout }

    /// - Parameters:
    ///   - identity: This listener's device identity.
    ///   - name: The name monitors show for this listener.
    ///   - database: The listener's store: paired monitors, last event seen, the `onNoise` setting.
    ///   - connector: How monitors are reached.
    ///   - mediaEngine: Makes the WebRTC receivers of live streams (the `Media` adapter); nil: ``openStream(monitorId:mediaType:)``
    ///     fails and automatic streams are ended at once.
    ///   - timings: Keep-alive, lost-link and media-start timings.
    ///   - logger: The program's logger (debug: each try to reach a monitor, what failed, the next try's wait).
    public init(
        identity: DeviceIdentity,
        name: String,
        database: CribCallDatabase,
        connector: any ControlConnector,
        mediaEngine: (any MediaEngine)? = nil,
        timings: Timings = .standard,
        logger: Logger = Logger(label: "cribcall")
    ) {
        self.logger = logger
        self.identity = identity
        self.name = name
        self.database = database
        self.connector = connector
        self.mediaEngine = mediaEngine
        self.timings = timings
    }

    /// Follows monitors to a new address: when one cannot be reached where it was, it is looked for by its id and
    /// pinned fingerprint with `browser`, and its stored address updated (seed §FR3 `lastKnownIp`).
    public func findMovedMonitors(with browser: any ServiceBrowser) {
        finder = browser
    }

    private var local: LocalDevice { LocalDevice(identity, name: name) }

    // MARK: pairing

    /// Pairs by PIN with the monitor at `host:port` whose certificate fingerprint is `fingerprint` (from discovery or
    /// the monitor's screen). `pin` is asked for once the monitor shows its PIN, and again after a wrong one.
    public func pairWithPIN(
        host: String,
        port: Int,
        fingerprint: CertificateFingerprint,
        monitorName: String? = nil,
        pin: @Sendable (_ attemptsRemaining: Int) async -> String?
    ) async throws -> TrustedMonitorRecord {
        let connection = try await connector.connect(host: host, port: port, pinnedFingerprint: fingerprint)
        return try await Self.closing(connection) { connection in
            // The monitor's id comes from the certificate it proved in TLS, not from a claim.
            let monitorId = try DeviceIdentity.deviceId(ofCertificateDER: connection.peer.certificateDER).uuidString
                .lowercased()
            var pairing = PINPairingListener(
                local: local, monitorId: monitorId, monitorFingerprint: connection.peer.fingerprint)
            try await connection.send(.pinPairingInit(pairing.start()))
            var frames = connection.inbound.makeAsyncIterator()
            while let frame = try await frames.next() {
                let message = try ControlMessageCodec.decode(payload: frame)
                guard Self.isPairingReply(message) else { continue }  // an already paired listener hears its news too
                switch try pairing.handle(message) {
                case .enterPIN(_, let attemptsRemaining):
                    guard let typed = await pin(attemptsRemaining) else {
                        throw Failure(description: "pairing cancelled")
                    }
                    try await connection.send(.pinSubmit(try pairing.submit(pin: typed)))
                case .tryAgain:
                    continue
                case .paired(let monitor):
                    return try database.trustMonitor(
                        monitor, name: monitorName ?? "Monitor at \(host)", host: host,
                        port: port, at: Date())
                }
            }
            throw Failure(
                description: "the monitor closed the connection during pairing (\(await connection.closed()))")
        }
    }

    /// Runs `body` on `connection` and closes it before returning, whether `body` returned or threw: a command
    /// that exits right after still told the monitor (a close left to a new task may never run in a process that
    /// is exiting, and the monitor would keep, e.g., the PIN session of a departed listener until the link times
    /// out).
    static func closing<T>(
        _ connection: any ControlConnection,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (any ControlConnection) async throws -> T
    ) async throws -> T {
        let result: T
        do {
            result = try await body(connection)
        } catch {
            await connection.close(code: 0)
            throw error
        }
        await connection.close(code: 0)
        return result
    }

    /// Pairs with the monitor whose QR code text is `qrText`, reached at `host:port` (default: the QR's port).
    public func pairWithQR(qrText: String, host: String, port: Int? = nil) async throws -> TrustedMonitorRecord {
        let client = try QRPairingClient(qrText: qrText, local: local)
        let target = port ?? client.payload.service.defaultPort
        let connection = try await connector.connect(
            host: host, port: target, pinnedFingerprint: client.pinnedFingerprint)
        return try await Self.closing(connection) { connection in
            try await connection.send(.pairRequest(client.request()))
            var frames = connection.inbound.makeAsyncIterator()
            var reply: ControlMessage?
            // A listener paired already (pairing again with a new code) is sent the monitor's news as it connects.
            while reply == nil, let frame = try await frames.next() {
                let message = try ControlMessageCodec.decode(payload: frame)
                if Self.isPairingReply(message) { reply = message }
            }
            guard let reply else { throw Failure(description: "the monitor closed the connection without answering") }
            let monitor = try client.complete(with: reply)
            return try database.trustMonitor(
                monitor, name: client.payload.monitorName, host: host, port: target, at: Date())
        }
    }

    /// Whether `message` answers a pairing step (rather than being news for a listener paired already).
    static func isPairingReply(_ message: ControlMessage) -> Bool {
        switch message {
        case .pairAccepted, .pairRejected, .pinRequired, .error: true
        default: false
        }
    }

    /// Pairs with the QR code's monitor, found on the LAN by the monitor id the code carries.
    public func pairWithQR(
        qrText: String,
        discoveringWith browser: any ServiceBrowser,
        timeout: Duration = .seconds(5)
    ) async throws -> TrustedMonitorRecord {
        let client = try QRPairingClient(qrText: qrText, local: local)  // a damaged code fails before browsing
        let payload = client.payload
        // The code's monitor: its id and the fingerprint the code pins (another device announcing the same id is
        // not it).
        let fingerprint = payload.monitorCertFingerprint.lowercased()
        let announced = try await Self.firstAnnounced(using: browser, timeout: timeout) { monitor in
            monitor.monitorId == payload.monitorId && monitor.certFingerprint.lowercased() == fingerprint
        }
        guard let found = announced,
            let host = found.hosts.first(where: { !$0.contains(":") }) ?? found.hosts.first
        else {
            let name = PeerName.sanitized(payload.monitorName)
            throw Failure(
                description: "monitor \"\(name)\" did not answer on the LAN within \(timeout); "
                    + "check it runs on this network, or give its address with --address HOST[:PORT]")
        }
        return try await pairWithQR(qrText: qrText, host: host, port: found.port)
    }

    // MARK: forgetting

    /// Whether the monitor heard that this listener forgot it.
    public enum ForgetOutcome: Sendable, Equatable {
        /// The monitor answered UNPAIRED: it no longer trusts this listener either.
        case monitorConfirmed
        /// The monitor could not be told (why): it keeps the pairing until someone revokes it there.
        case monitorNotTold(String)
    }

    /// Forgets a paired monitor (PROTOCOL.md §7): tells it with UNPAIR when it can be reached within `timeout`,
    /// and forgets it here either way.
    public func forget(_ monitor: TrustedMonitorRecord, timeout: Duration = .seconds(5)) async throws -> ForgetOutcome {
        let outcome = await tellUnpair(monitor, timeout: timeout)
        _ = try database.forgetMonitor(id: monitor.monitorId)
        return outcome
    }

    private func tellUnpair(_ monitor: TrustedMonitorRecord, timeout: Duration) async -> ForgetOutcome {
        guard let host = monitor.lastKnownHost, let port = monitor.lastKnownPort else {
            return .monitorNotTold("its address is unknown")
        }
        let listenerId = local.deviceId.uuidString.lowercased()
        let connector = connector
        let exchange = Task { () throws -> ForgetOutcome in
            let connection = try await connector.connect(host: host, port: port, pinnedFingerprint: monitor.fingerprint)
            return try await Self.closing(connection) { connection in
                try await connection.send(.unpair(Unpair(listenerId: listenerId)))
                for try await frame in connection.inbound {
                    switch try ControlMessageCodec.decode(payload: frame) {
                    case .unpaired(let reply) where reply.listenerId == listenerId:
                        return .monitorConfirmed
                    case .error(let error):
                        return .monitorNotTold("it answered \(error.error): \(error.message)")
                    default:
                        continue
                    }
                }
                return .monitorNotTold("it closed the connection without answering")
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            exchange.cancel()
        }
        defer { timer.cancel() }
        do {
            return try await exchange.value
        } catch is CancellationError {
            return .monitorNotTold("it did not answer within \(timeout)")
        } catch {
            return .monitorNotTold("\(error)")
        }
    }

    // MARK: safety alerts

    /// Acts on a safety alert over a connection of its own (for a command line or a script; a running `listen`
    /// uses ``act(_:on:monitorId:minutes:)`` on its open link): sends ALERT_ACTION and waits for the monitor's
    /// ALERT_UPDATED, which every listener gets.
    /// - Returns: The update as the monitor announced it.
    /// - Throws: ``Failure`` saying why it was not done (unreachable, unknown alert, no answer in `timeout`).
    public func act(
        _ action: AlertActionKind, on alertId: String, monitor: TrustedMonitorRecord, minutes: Int? = nil,
        timeout: Duration = .seconds(10)
    ) async throws -> AlertUpdated {
        guard let host = monitor.lastKnownHost, let port = monitor.lastKnownPort else {
            throw Failure(description: "the address of \"\(PeerName.sanitized(monitor.name))\" is unknown; pair again")
        }
        let connector = connector
        let exchange = Task { () throws -> AlertUpdated in
            let connection = try await connector.connect(host: host, port: port, pinnedFingerprint: monitor.fingerprint)
            return try await Self.closing(connection) { connection in
                try await connection.send(
                    .alertAction(AlertAction(alertId: alertId, action: action, minutes: minutes)))
                for try await frame in connection.inbound {
                    switch try ControlMessageCodec.decode(payload: frame) {
                    case .alertUpdated(let update) where update.alertId == alertId:
                        return update
                    case .error(let error):
                        throw Failure(description: "the monitor answered \(error.error): \(error.message)")
                    default:
                        continue
                    }
                }
                throw Failure(description: "the monitor closed the connection without answering")
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            exchange.cancel()
        }
        defer { timer.cancel() }
        do {
            return try await exchange.value
        } catch is CancellationError {
            throw Failure(description: "\"\(PeerName.sanitized(monitor.name))\" did not answer within \(timeout)")
        }
    }

    // MARK: discovery

    /// A monitor seen on the LAN, and whether this listener is paired with it.
    public struct ScannedMonitor: Sendable, Hashable {
        public var monitor: DiscoveredMonitor
        public var paired: Bool
    }

    /// Browses for `duration` and returns the monitors seen (last state of each), paired ones marked. A monitor
    /// counts as paired only if both its id and its advertised fingerprint match a stored pairing.
    public func scan(using browser: any ServiceBrowser, for duration: Duration) async throws -> [ScannedMonitor] {
        let paired = Set((try database.trustedMonitors()).map { "\($0.monitorId)|\($0.fingerprint.hex)" })
        let events = browser.browseMonitors()
        let collector = Task {
            var found: [String: DiscoveredMonitor] = [:]
            for try await event in events {
                switch event {
                // Keyed by id and fingerprint: a stranger announcing a monitor's id is listed beside it.
                case .found(let monitor), .updated(let monitor):
                    found["\(monitor.monitorId)|\(monitor.certFingerprint)"] = monitor
                case .lost(let monitorId): found = found.filter { $0.value.monitorId != monitorId }
                }
            }
            return found
        }
        try await Task.sleep(for: duration)
        collector.cancel()
        // Browsing errors (e.g. no Avahi daemon) reach the caller; the end of the scan is not an error.
        let seen: [String: DiscoveredMonitor]
        do {
            seen = try await collector.value
        } catch is CancellationError {
            seen = [:]
        }
        return seen.values.sorted { $0.monitorName < $1.monitorName }.map {
            ScannedMonitor(monitor: $0, paired: paired.contains("\($0.monitorId)|\($0.certFingerprint)"))
        }
    }

    /// Finds a monitor by id (or unique id prefix) or exact name, browsing for at most `timeout`.
    /// - Returns: The monitor, or nil when none answered in time.
    /// - Throws: What the browser throws when it cannot browse at all (no mDNS daemon), at once.
    public func find(
        _ query: String,
        using browser: any ServiceBrowser,
        timeout: Duration = .seconds(5)
    ) async throws -> DiscoveredMonitor? {
        try await Self.firstAnnounced(using: browser, timeout: timeout) { monitor in
            monitor.monitorId == query || monitor.monitorName == query
                || (query.count >= 4 && monitor.monitorId.hasPrefix(query.lowercased()))
        }
    }

    /// The first monitor announced (found, or changed) that `matches`, browsing for at most `timeout`.
    /// - Returns: The monitor, or nil when none matched in time.
    /// - Throws: What the browser throws when it cannot browse at all (no mDNS daemon), at once.
    private static func firstAnnounced(
        using browser: any ServiceBrowser,
        timeout: Duration,
        where matches: @escaping @Sendable (DiscoveredMonitor) -> Bool
    ) async throws -> DiscoveredMonitor? {
        let events = browser.browseMonitors()
        let search = Task { () -> DiscoveredMonitor? in
            for try await event in events {
                switch event {
                case .found(let monitor), .updated(let monitor): if matches(monitor) { return monitor }
                case .lost: continue
                }
            }
            return nil
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            search.cancel()
        }
        defer { timer.cancel() }
        // Not found in time is nil; a browser that cannot browse (no Avahi daemon) says why, at once.
        do {
            return try await search.value
        } catch  where search.isCancelled {
            return nil
        }
    }

    // MARK: listening

    /// Connects to every paired monitor and reports alerts until the stream's consumer stops.
    ///
    /// - Parameter keepOpen: Keep the stream open when no monitor is followed (none paired yet, or every one
    ///   refused this listener): the app pairs new ones (``follow(_:)``). Otherwise the stream ends then.
    public func listen(keepOpen: Bool = false) -> AsyncStream<ListenerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ListenerEvent.self)
        reporting = (continuation, keepOpen)
        for monitor in stored("read the paired monitors (none is followed)", { try $0.trustedMonitors() }) ?? [] {
            follow(monitor)
        }
        if following.isEmpty, !keepOpen { continuation.finish() }
        continuation.onTermination = { _ in Task { await self.stopFollowing() } }
        return stream
    }

    /// Follows a monitor paired while ``listen(keepOpen:)`` runs (nothing when not listening, or already followed).
    public func follow(_ monitor: TrustedMonitorRecord) {
        guard let (report, _) = reporting, following[monitor.monitorId] == nil else { return }
        let token = newToken()
        following[monitor.monitorId] = (
            token,
            Task {
                await self.follow(monitor, report: report)
                await self.followingEnded(monitor.monitorId, token: token)
            }
        )
    }

    /// Stops following a monitor (forgotten while listening).
    public func unfollow(monitorId: String) {
        following.removeValue(forKey: monitorId)?.task.cancel()
        if following.isEmpty, let (report, keepOpen) = reporting, !keepOpen { report.finish() }
    }

    private func followingEnded(_ monitorId: String, token: UInt64) {
        guard following[monitorId]?.token == token else { return }
        following[monitorId] = nil
        if following.isEmpty, let (report, keepOpen) = reporting, !keepOpen { report.finish() }
    }

    private func stopFollowing() {
        for (_, task) in following.values { task.cancel() }
        following = [:]
        reporting = nil
    }

    /// Keeps one monitor connected, with reconnection and replay, until cancelled or unauthorized. Where it cannot
    /// be reached, it is looked for by mDNS (``findMovedMonitors(with:)``): a monitor that moved is followed there.
    private func follow(_ monitor: TrustedMonitorRecord, report: AsyncStream<ListenerEvent>.Continuation) async {
        var address = Self.address(monitor)
        if address == nil { address = await rediscover(monitor, notAt: nil) }
        guard var (host, port) = address else {
            report.yield(
                .linkLost(
                    monitorId: monitor.monitorId, monitorName: monitor.name,
                    reason: "no known address; pair again or use discovery"))
            return
        }
        var backoff: Duration = .milliseconds(500)
        var lost = false
        var log = logger
        log[metadataKey: "monitor"] = "\(monitor.monitorId.prefix(8))"
        while !Task.isCancelled {
            // Another process (a new pairing, `cribcall monitors`) may have stored a newer address.
            if let stored = stored("read the paired monitors' addresses", { try $0.trustedMonitors() })?
                .first(where: { $0.monitorId == monitor.monitorId }),
                let newer = Self.address(stored), newer != (host, port), stored.fingerprint == monitor.fingerprint
            {
                (host, port) = newer
            }
            do {
                log.debug("connecting to \(host):\(port)")
                let connection = try await connector.connect(
                    host: host, port: port, pinnedFingerprint: monitor.fingerprint)
                log.debug("connected to \(host):\(port)")
                backoff = .milliseconds(500)
                // Streams can be opened once `connected` is reported; they end with the session.
                let link = openLink(monitor.monitorId, connection: connection, report: report)
                report.yield(
                    lost
                        ? .linkRestored(monitorId: monitor.monitorId, monitorName: monitor.name)
                        : .connected(
                            monitorId: monitor.monitorId, monitorName: monitor.name,
                            address: "\(host):\(port)"))
                lost = false
                let outcome = await session(connection, monitor: monitor, report: report)
                closeLink(monitor.monitorId, token: link)
                if case .unauthorized = outcome { return }
                // Stopped (the person quit, or stopped following): not a lost link.
                if Task.isCancelled { return }
                lost = true
                log.debug("link ended: \(outcome.reason)")
                report.yield(.linkLost(monitorId: monitor.monitorId, monitorName: monitor.name, reason: outcome.reason))
            } catch ControlTransportError.fingerprintMismatch(let expected, let actual) {
                // Another device answers at the old address (its lease went to someone else): the monitor itself
                // may be elsewhere. Only when it is nowhere to be found is this a refusal.
                if let moved = await rediscover(monitor, notAt: (host, port)) {
                    (host, port) = moved
                    continue
                }
                report.yield(
                    .unauthorized(
                        monitorId: monitor.monitorId, monitorName: monitor.name,
                        message: "\(ControlTransportError.fingerprintMismatch(expected: expected, actual: actual))"))
                return
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                log.debug("could not connect to \(host):\(port): \(error)")
                if !lost {
                    lost = true
                    report.yield(.linkLost(monitorId: monitor.monitorId, monitorName: monitor.name, reason: "\(error)"))
                }
            }
            // Not reachable where it was: it may have moved (a new lease, a restart on another port).
            if let moved = await rediscover(monitor, notAt: (host, port)) {
                log.debug("found on the LAN at \(moved.host):\(moved.port)")
                (host, port) = moved
                backoff = .milliseconds(500)
                continue
            }
            log.debug("next try in \(backoff)")
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(10))
        }
    }

    /// A monitor's stored address, or nil.
    private static func address(_ monitor: TrustedMonitorRecord) -> (host: String, port: Int)? {
        guard let host = monitor.lastKnownHost, let port = monitor.lastKnownPort else { return nil }
        return (host, port)
    }

    /// Looks for `monitor` on the LAN (by its id and pinned fingerprint, never its name: a stranger can announce
    /// any name or id, but not a certificate it does not hold) for at most ``rediscoveryTime``. Answers its address
    /// when it is announced anywhere but `current`, and stores it; nil when it is not found, is still at `current`,
    /// or nothing can browse (no finder, no mDNS daemon).
    private func rediscover(
        _ monitor: TrustedMonitorRecord, notAt current: (host: String, port: Int)?
    ) async -> (host: String, port: Int)? {
        guard let finder, !Task.isCancelled else { return nil }
        let (id, fingerprint) = (monitor.monitorId, monitor.fingerprint.hex)
        let announced = try? await Self.firstAnnounced(using: finder, timeout: Self.rediscoveryTime) {
            $0.monitorId == id && $0.certFingerprint.lowercased() == fingerprint && !$0.hosts.isEmpty
        }
        guard let found = announced ?? nil,
            let host = found.hosts.first(where: { !$0.contains(":") }) ?? found.hosts.first
        else { return nil }
        // Announced where it is already looked for: it has not moved.
        if let current, found.hosts.contains(current.host), found.port == current.port { return nil }
        let moved = (host: host, port: found.port)
        stored("save the monitor's new address (it is looked for again after a restart)") {
            try $0.updateMonitorAddress(id: monitor.monitorId, host: moved.host, port: moved.port)
        }
        return moved
    }

    private enum SessionOutcome {
        case lost(String)
        case unauthorized
        var reason: String {
            switch self {
            case .lost(let reason): reason
            case .unauthorized: "unauthorized"
            }
        }
    }

    /// One connected period: replay, then alerts and stream signaling, with keep-alive.
    private func session(
        _ connection: any ControlConnection,
        monitor: TrustedMonitorRecord,
        report: AsyncStream<ListenerEvent>.Continuation
    ) async -> SessionOutcome {
        let lastHeard = LastHeard()
        let ping = pingInterval
        let timeout = linkTimeout
        // Pings every `ping`, and wakes exactly when the silence would reach `timeout`, so a dead link is noticed
        // on time rather than at the next ping.
        let keepAlive = Task {
            let clock = ContinuousClock()
            var nextPing = clock.now + ping
            while !Task.isCancelled {
                let silence = lastHeard.silence
                if silence > timeout {
                    await connection.close(code: 0)
                    return
                }
                if clock.now >= nextPing {
                    nextPing = clock.now + ping
                    let now = Int64(Date().timeIntervalSince1970 * 1000)
                    try? await connection.send(.ping(Ping(timestamp: now)))
                }
                let wake = min(nextPing, clock.now + (timeout - silence) + .milliseconds(20))
                try? await clock.sleep(until: wake)
            }
        }
        defer { keepAlive.cancel() }
        do {
            let since =
                stored("read which alerts it has had (all the monitor keeps are asked for again)") {
                    try $0.lastSeq(monitorId: monitor.monitorId)
                } ?? 0
            var log = EventLogReader(since: since, pairedAt: monitor.createdAt)
            try await connection.send(.eventsSince(EventsSince(afterSeq: since)))
            for try await frame in connection.inbound {
                lastHeard.touch()
                let message = try ControlMessageCodec.decode(payload: frame)
                if await handleStreamMessage(message, monitorId: monitor.monitorId) { continue }
                switch message {
                case .noiseEvent(let event):
                    let logged = log.take(seq: event.seq, replayed: event.replayed == true, at: event.timestamp)
                    if took(logged, seq: event.seq, from: monitor, report: report) {
                        report.yield(.noise(monitorId: monitor.monitorId, monitorName: monitor.name, event: event))
                    }
                    // The automatic stream is open or ended before the next message (its WEBRTC_OFFER) is read.
                    if let sessionId = event.autoStreamSessionId, event.replayed != true {
                        await offeredAutomaticStream(sessionId, monitorId: monitor.monitorId)
                    } else if event.replayed != true {
                        openOnNoise(monitorId: monitor.monitorId)
                    }
                case .monitorState(let state):
                    let known = monitoringKnown.updateValue(state.monitoring, forKey: monitor.monitorId)
                    // Said when it changes, and once per run (always when off: nothing will come from it).
                    if known != state.monitoring || state.monitoring == .off && known == nil {
                        report.yield(
                            .monitoring(
                                monitorId: monitor.monitorId, monitorName: monitor.name, state: state.monitoring,
                                changed: known != nil))
                    }
                case .safetyStatus(let status):
                    report.yield(.safetyStatus(monitorId: monitor.monitorId, monitorName: monitor.name, status: status))
                case .safetyAlert(let alert):
                    // The event log's seq: shown once, also when a replay overlaps what arrived live.
                    let logged = log.take(seq: alert.seq, replayed: alert.replayed == true, at: alert.detectedAt)
                    if took(logged, seq: alert.seq, from: monitor, report: report) {
                        report.yield(
                            .safetyAlert(monitorId: monitor.monitorId, monitorName: monitor.name, alert: alert))
                    }
                case .alertUpdated(let update):
                    report.yield(.alertUpdated(monitorId: monitor.monitorId, monitorName: monitor.name, update: update))
                case .error(let error) where error.errorCode == .unauthorized:
                    report.yield(
                        .unauthorized(
                            monitorId: monitor.monitorId, monitorName: monitor.name,
                            message: error.message))
                    return .unauthorized
                default:
                    continue
                }
            }
        } catch {
            return .lost("\(error)")
        }
        let reason = await connection.closed()
        if case .peerApplication(2, _) = reason {
            // Closed as UNAUTHORIZED after an ERROR about one message (e.g. PIN_STREAM once revoked): still revoked.
            report.yield(
                .unauthorized(
                    monitorId: monitor.monitorId, monitorName: monitor.name,
                    message: "the monitor closed the connection: this listener is not trusted"))
            return .unauthorized
        }
        return .lost(lastHeard.silence > timeout ? "no answer for \(timeout)" : "\(reason)")
    }
}

extension ListenerService {
    /// Carries out an ``EventLogReader`` verdict on one event of `monitor`'s log: reports alerts the monitor no
    /// longer keeps, records the seq as received, and says whether to show the event.
    func took(
        _ verdict: EventLogReader.Verdict, seq: Int64, from monitor: TrustedMonitorRecord,
        report: AsyncStream<ListenerEvent>.Continuation
    ) -> Bool {
        if verdict.notKept > 0 {
            report.yield(
                .alertsNotKept(monitorId: monitor.monitorId, monitorName: monitor.name, count: verdict.notKept))
        }
        if verdict.record {
            stored("note which alerts it has had (they may be shown again after a reconnection)") {
                try $0.recordReceived(seq: seq, from: monitor.monitorId)
            }
        }
        return verdict.show
    }

    /// Work on the store: its value, or nil when it failed, which is said (``ListenerEvent/storeFailed(what:reason:)``)
    /// once until the same work succeeds again.
    @discardableResult
    func stored<Value>(_ what: String, _ body: (CribCallDatabase) throws -> Value) -> Value? {
        let (database, report) = (database, reporting?.0)
        return storeWork.attempt(
            what, { try body(database) },
            firstFailure: { what, error in report?.yield(.storeFailed(what: what, reason: "\(error)")) })
    }
}

/// When the monitor was last heard from (shared by the reader and the keep-alive task).
final class LastHeard: Sendable {
    private let instant = Synchronization.Mutex(ContinuousClock.now)
    func touch() { instant.withLock { $0 = .now } }
    var silence: Duration { instant.withLock { ContinuousClock.now - $0 } }
}
