import ControlTransport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import SoundDetection
import Synchronization
import Testing

/// PROTOCOL.md §8 over a long outage: the monitor prunes its log as it writes (the last 1,000, or 24 h), replays all
/// it keeps in pages, and the listener shows each kept event once, in order, and how many were not kept.
@Suite("Replay after a long outage, and a new pairing's start")
struct ReplayTests {
    typealias Recorder = MonitorListenerTests.Recorder

    /// A wall clock the test sets.
    final class Clock: Sendable {
        private let now = Mutex(Date())
        func read() -> Date { now.withLock { $0 } }
        func set(_ date: Date) { now.withLock { $0 = date } }
    }

    struct Rig {
        let network = InMemoryNetwork()
        let monitorIdentity: DeviceIdentity
        let monitorDatabase: CribCallDatabase
        let monitor: MonitorService
        let run: Task<Void, Never>
        let clock = Clock()

        init() throws {
            monitorIdentity = try DeviceIdentity.generate(now: Date())
            monitorDatabase = try CribCallDatabase.inMemory()
            let transport = network.listen(port: 48080, identity: PeerCertificate(identity: monitorIdentity))
            let clock = clock
            let monitor = try MonitorService(
                identity: monitorIdentity, database: monitorDatabase, transport: transport, wallClock: clock.read)
            self.monitor = monitor
            run = Task {
                async let served: Void = monitor.run()
                for await _ in monitor.events {}
                await served
            }
        }

        func listener(_ name: String) throws -> (ListenerService, CribCallDatabase) {
            let identity = try DeviceIdentity.generate(now: Date())
            let database = try CribCallDatabase.inMemory()
            return (
                ListenerService(
                    identity: identity, name: name, database: database,
                    connector: network.connector(identity: PeerCertificate(identity: identity))),
                database
            )
        }

        func noise(_ count: Int, at date: Date) async throws {
            clock.set(date)
            for _ in 0..<count {
                try await monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
            }
        }
    }

    static func noiseSeqs(_ events: [ListenerEvent]) -> [Int64] {
        events.compactMap { if case .noise(_, _, let event) = $0 { event.seq } else { nil } }
    }

    @Test("2,500 alerts during an outage: every one the monitor kept is replayed in order, and the rest counted")
    func longOutage() async throws {
        let rig = try Rig()
        let (listener, _) = try rig.listener("Dad")
        _ = try await listener.pairWithQR(qrText: await rig.monitor.showQR(port: 48080).qrText, host: "nursery")
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)

        // Connected: one alert.
        let first = Recorder<ListenerEvent>()
        let listening = Task { for await event in await listener.listen() { first.append(event) } }
        #expect(await first.wait { if case .connected = $0 { true } else { false } } != nil)
        try await rig.noise(1, at: Date())
        #expect(await first.wait { if case .noise = $0 { true } else { false } } != nil)
        listening.cancel()
        await listening.value

        // The outage: 1,000 more alerts two days ago, then 1,500 today.
        try await rig.noise(1_000, at: twoDaysAgo.addingTimeInterval(60))
        try await rig.noise(1_500, at: Date())
        let kept = try rig.monitorDatabase.noiseEvents(afterSeq: 1, limit: 10_000).map(\.seq)
        #expect(kept.count < 2_500, "the log was pruned as it was written (kept \(kept.count))")
        #expect(kept.count >= 1_500, "a day's alerts are all kept")
        let notKept = Int64(2_500 - kept.count)

        let heard = Recorder<ListenerEvent>()
        let again = Task { for await event in await listener.listen() { heard.append(event) } }
        let last = try #require(kept.last)
        let caughtUp = await heard.wait(timeout: .seconds(60)) {
            if case .noise(_, _, let event) = $0 { event.seq == last } else { false }
        }
        again.cancel()
        await again.value
        #expect(caughtUp != nil, "replayed up to #\(last): \(Self.noiseSeqs(heard.all).suffix(3))")
        #expect(Self.noiseSeqs(heard.all) == kept, "each kept alert once, in order")
        let counted = heard.all.compactMap { if case .alertsNotKept(_, _, let count) = $0 { count } else { nil } }
        #expect(counted == [notKept], "the alerts not kept are counted once")
        let gapFirst = heard.all.firstIndex { if case .alertsNotKept = $0 { true } else { false } }
        let replayFirst = heard.all.firstIndex { if case .noise = $0 { true } else { false } }
        #expect(gapFirst != nil && replayFirst != nil && gapFirst! < replayFirst!, "the count comes before the replay")
        rig.run.cancel()
    }

    @Test("a new pairing starts at the monitor's present: its older alerts are not shown as missed")
    func newPairing() async throws {
        let rig = try Rig()
        try await rig.noise(5, at: Date().addingTimeInterval(-3_600))
        let (listener, database) = try rig.listener("Mum")
        let record = try await listener.pairWithQR(
            qrText: await rig.monitor.showQR(port: 48080).qrText, host: "nursery")
        let heard = Recorder<ListenerEvent>()
        let listening = Task { for await event in await listener.listen() { heard.append(event) } }
        #expect(await heard.wait { if case .connected = $0 { true } else { false } } != nil)
        try await rig.noise(1, at: Date())
        // (Live, or replayed when it was logged just before the monitor took the connection: shown either way.)
        _ = await heard.wait { if case .noise = $0 { true } else { false } }
        listening.cancel()
        await listening.value
        #expect(Self.noiseSeqs(heard.all) == [6], "only the alert after the pairing: \(Self.noiseSeqs(heard.all))")
        #expect(try database.lastSeq(monitorId: record.monitorId) == 6)
        rig.run.cancel()
    }
}
