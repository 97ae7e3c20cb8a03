import ControlTransport
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import StreamMedia
import Synchronization
import Testing

/// A monitor service on the in-memory transport, with its events recorded, and a way to connect listeners.
final class MonitorHarness: Sendable {
    let network = InMemoryNetwork()
    let monitor: DeviceIdentity
    let database: CribCallDatabase
    let service: MonitorService
    let port = 48080
    private let recorded = Recorded()
    private let tasks: [Task<Void, Never>]

    init(
        database: CribCallDatabase? = nil,
        mediaEngine: (any MediaEngine)? = nil,
        streamClock: any StreamClock = SystemStreamClock(),
        heldReplies: HeldReplies? = nil,
        pairingGrace: Duration = .seconds(30),
        strangerReportWindow: Duration = .seconds(10)
    ) throws {
        monitor = try DeviceIdentity.generate(now: Date())
        self.database = try database ?? CribCallDatabase.inMemory()
        let listener = network.listen(port: port, identity: PeerCertificate(identity: monitor))
        let service = try MonitorService(
            identity: monitor, database: self.database, transport: heldReplies?.wrap(listener) ?? listener,
            mediaEngine: mediaEngine, streamClock: streamClock, pairingGrace: pairingGrace,
            strangerReportWindow: strangerReportWindow)
        self.service = service
        let recorded = self.recorded
        tasks = [
            Task { await service.run() },
            Task {
                for await event in service.events { recorded.append(event) }
            },
        ]
        self.listener = listener
    }

    private let listener: InMemoryListener

    var events: [MonitorEvent] { recorded.all }

    final class Recorded: Sendable {
        private let events = Mutex<[MonitorEvent]>([])
        var all: [MonitorEvent] { events.withLock { $0 } }
        func append(_ event: MonitorEvent) { events.withLock { $0.append(event) } }
    }

    /// Waits (bounded) for an event matching `predicate`.
    func event(where predicate: (MonitorEvent) -> Bool) async -> MonitorEvent? {
        for _ in 0..<500 {
            if let match = events.last(where: predicate) { return match }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// The PIN the monitor is showing for `pairingSessionId`.
    func shownPIN(for pairingSessionId: String) async -> String? {
        let shown = await event { event in
            if case .pin(_, pairingSessionId, _, _) = event { return true }
            return false
        }
        if case .pin(let pin, _, _, _)? = shown { return pin }
        return nil
    }

    func connect(_ identity: DeviceIdentity) async throws -> InMemoryControlConnection {
        try network.connector(identity: PeerCertificate(identity: identity))
            .connectInMemory(host: "monitor.local", port: port, pinnedFingerprint: monitor.fingerprint)
    }

    /// Pairs `listener` (as `name`) with the PIN the monitor shows, typed after `typing`; returns the open
    /// connection.
    func pairByPIN(_ listener: DeviceIdentity, name: String, typing: Duration = .zero) async throws
        -> InMemoryControlConnection
    {
        let connection = try await connect(listener)
        var pairing = PINPairingListener(
            local: LocalDevice(listener, name: name), monitorId: monitor.deviceId.uuidString.lowercased(),
            monitorFingerprint: connection.peer.fingerprint)
        try await connection.send(.pinPairingInit(pairing.start()))
        var frames = connection.inbound.makeAsyncIterator()
        let required = try #require(try await connection.nextMessage(&frames))
        _ = try pairing.handle(required)
        guard case .pinRequired(let challenge) = required else { throw PairingError(.unexpectedMessage, "no PIN") }
        let pin = try #require(await shownPIN(for: challenge.pairingSessionId))
        if typing > .zero { try await Task.sleep(for: typing) }
        try await connection.send(.pinSubmit(try pairing.submit(pin: pin)))
        let answer = try #require(try await connection.nextMessage(&frames))
        guard case .paired(let paired) = try pairing.handle(answer) else {
            throw PairingError(.rejected, "not paired")
        }
        #expect(paired.fingerprint == monitor.fingerprint)
        return connection
    }

    func stop() async {
        await listener.shutdown()
        for task in tasks { await task.value }
    }
}

extension ControlConnection {
    /// The next message, decoded (nil when the connection ended), MONITOR_STATE aside unless `includingState`: every trusted connection gets one first, and
    /// each switch sends another, which tests of other things need not read (``MonitoringSwitchTests`` reads them).
    func nextMessage(
        _ iterator: inout ControlFrameSequence.Iterator, includingState: Bool = false
    ) async throws -> ControlMessage? {
        while let frame = try await iterator.next() {
            let message = try ControlMessageCodec.decode(payload: frame)
            if case .monitorState = message, !includingState { continue }
            return message
        }
        return nil
    }
}
