import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import Media
import QUIC
import Synchronization
import TestSupport
import Testing

/// The first Listen after pairing must play (issue 20): a parent who taps Listen and hears nothing, with no error,
/// is the worst failure a baby monitor can have.
///
/// Each try is a new household: a monitor (real QUIC, a real webrtcbin sender) and a listener (real QUIC, a real
/// webrtcbin receiver) in this process, paired by QR code, and the listener's very first stream. Every try must
/// deliver audio. `HOMEAPPS_FIRST_STREAM_TRIES` sets the number of tries (`make test`: 20; issue 20 asks for 200,
/// idle and under `make test-stress`-like load).
///
/// The failure behind issue 20 (the listener's checks reaching the monitor long before its answer: libnice failed
/// the monitor's only pair, WebRTCPipeline.publishLocalDescription) is reproduced deterministically by
/// LiveStreamTests' "answer arrives 6 s after" test; this one keeps the whole path honest: pairing, the control
/// channel, both services and both pipelines, cold each time.
@Suite(.serialized, .heavy("a monitor and a listener with real QUIC and webrtcbin pipelines"))
struct FirstStreamTests {
    static var tries: Int {
        ProcessInfo.processInfo.environment["HOMEAPPS_FIRST_STREAM_TRIES"].flatMap(Int.init) ?? 20
    }

    @Test("the first stream right after pairing delivers audio, every time")
    func firstStreamAfterPairingPlays() async throws {
        var startTimes: [Duration] = []
        for attempt in 1...Self.tries {
            if let started = try await Self.firstStream(attempt: attempt) { startTimes.append(started) }
        }
        let sorted = startTimes.sorted()
        #expect(sorted.count == Self.tries, "\(Self.tries - sorted.count) of \(Self.tries) first streams did not play")
        print(
            "first stream after pairing: \(sorted.count) of \(Self.tries) played; start p50 "
                + "\(sorted.isEmpty ? .zero : sorted[sorted.count / 2]), max \(sorted.last ?? .zero)")
    }

    /// Pairs a new monitor and listener, opens the listener's first stream and returns how long it took to play
    /// (nil, with an issue recorded, when it did not).
    static func firstStream(attempt: Int) async throws -> Duration? {
        let monitorIdentity = try DeviceIdentity.generate(now: Date())
        let quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitorIdentity)
        let senderEngine = try MediaTestSupport.senderEngine()
        let monitor = try MonitorService(
            identity: monitorIdentity, database: try CribCallDatabase.inMemory(), transport: quic,
            mediaEngine: senderEngine
        )
        let serving = Task {
            async let served: Void = monitor.run()
            for await _ in monitor.events {}
            await served
        }
        let listenerIdentity = try DeviceIdentity.generate(now: Date())
        let receiverEngine = try MediaTestSupport.receiverEngine()
        let listener = ListenerService(
            identity: listenerIdentity, name: "Phone \(attempt)", database: try CribCallDatabase.inMemory(),
            connector: try QUICConnector(identity: listenerIdentity), mediaEngine: receiverEngine
        )
        defer { serving.cancel() }
        let paired = try await listener.pairWithQR(
            qrText: await monitor.showQR(port: quic.port).qrText, host: "127.0.0.1"
        )
        // As `cribcall listen` after `cribcall pair`: listening covers the monitors paired when it starts.
        let heard = Heard()
        let listening = Task { for await event in await listener.listen() { heard.append(event) } }
        defer { listening.cancel() }
        try #require(
            await heard.wait(timeout: .seconds(30)) { if case .connected = $0 { true } else { false } } != nil,
            "try \(attempt): the listener did not connect after pairing: \(heard.events)"
        )
        let requested = ContinuousClock.now
        let sessionId = try await listener.openStream(monitorId: paired.monitorId, mediaType: .audio)
        // The stream either plays or ends by itself (no audio within 15 s ends it with a reason): wait for either.
        let outcome = await heard.wait(timeout: .seconds(30)) { event in
            switch event {
            case .streamStarted(_, sessionId, _), .streamEnded(_, sessionId, _): true
            default: false
            }
        }
        let playedAfter = ContinuousClock.now - requested
        guard case .streamStarted? = outcome else {
            await quic.shutdown()
            Issue.record(
                "try \(attempt) of \(tries): the first stream did not play: \(outcome.map { "\($0)" } ?? "no event in 30 s")"
            )
            return nil
        }
        await listener.endStream(sessionId: sessionId)
        _ = await heard.wait(timeout: .seconds(10)) {
            if case .streamEnded(_, sessionId, _) = $0 { true } else { false }
        }
        await quic.shutdown()
        return playedAfter
    }
}

/// The listener's events, for waiting on.
private final class Heard: Sendable {
    private let recorded = Mutex<[ListenerEvent]>([])

    func append(_ event: ListenerEvent) { recorded.withLock { $0.append(event) } }

    var events: [ListenerEvent] { recorded.withLock { $0 } }

    func wait(timeout: Duration, for predicate: (ListenerEvent) -> Bool) async -> ListenerEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = events.first(where: predicate) { return event }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return events.first(where: predicate)
    }
}
