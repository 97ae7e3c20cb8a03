import ControlTransport
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DeviceIdentity
import Foundation
import SoundDetection
import StreamMedia
import Synchronization
import Testing

/// One listener's control connection, seen from the listener: what it sends and, in order, what it receives.
final class ListenerLink: Sendable {
    let connection: InMemoryControlConnection
    let listenerId: String
    private let received = Mutex<[ControlMessage]>([])
    private let taken = Mutex(0)
    private let pings = Mutex<Int64>(0)

    init(_ connection: InMemoryControlConnection, listenerId: String) {
        self.connection = connection
        self.listenerId = listenerId
        Task { [weak self] in
            var frames = connection.inbound.makeAsyncIterator()
            while let message = try? await connection.nextMessage(&frames) {
                self?.received.withLock { $0.append(message) }
            }
        }
    }

    func send(_ message: ControlMessage) async throws {
        try await connection.send(message)
    }

    /// The next message not taken yet, waiting at most 10 s (nil: none came).
    func next() async -> ControlMessage? {
        for _ in 0..<1000 {
            let message: ControlMessage? = taken.withLock { taken in
                received.withLock { received in
                    guard received.count > taken else { return nil }
                    taken += 1
                    return received[taken - 1]
                }
            }
            if let message { return message }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// The next `count` messages (fewer if they do not come).
    func next(_ count: Int) async -> [ControlMessage] {
        var messages: [ControlMessage] = []
        for _ in 0..<count {
            guard let message = await next() else { break }
            messages.append(message)
        }
        return messages
    }

    /// Sends a PING and returns what arrived before its PONG: the monitor queues the PONG after everything it
    /// queued for this listener before handling the PING, so an empty result means "nothing else was sent".
    func sync() async throws -> [ControlMessage] {
        let stamp = pings.withLock {
            $0 += 1
            return $0
        }
        try await send(.ping(Ping(timestamp: stamp)))
        var before: [ControlMessage] = []
        while let message = await next() {
            if message == .pong(Ping(timestamp: stamp)) { return before }
            before.append(message)
        }
        Issue.record("no PONG for PING \(stamp); got \(before)")
        return before
    }
}

extension MonitorHarness {
    /// Trusts `identity` (as if paired), connects it and waits until the monitor serves the connection.
    func trustedLink(_ identity: DeviceIdentity, name: String = "Listener") async throws -> ListenerLink {
        let listenerId = identity.deviceId.uuidString.lowercased()
        try database.trust(identity, as: listenerId, name: name)
        await service.reloadTrust()
        let link = ListenerLink(try await connect(identity), listenerId: listenerId)
        // Answered: the monitor has registered the connection (noise events reach it from now on).
        #expect(try await link.sync().isEmpty)
        return link
    }

    /// Waits (bounded) for the monitor's stream events and returns all of them so far.
    func streamEvents(count: Int) async -> [MonitorEvent] {
        let isStream: (MonitorEvent) -> Bool = {
            switch $0 {
            case .streamStarted, .streamEnded: true
            default: false
            }
        }
        for _ in 0..<500 where events.filter(isStream).count < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return events.filter(isStream)
    }
}

/// Live-stream signaling on the monitor (PROTOCOL.md §4, §9) with the in-memory media engine: what a listener sees
/// on its control connection, and what the monitor's senders were given.
@Suite("MonitorService: live-stream signaling (START, offer/answer/ICE, END, PIN, auto-stream)")
struct StreamSignalingTests {
    let engine = InMemoryMediaEngine()
    let clock = ManualStreamClock()

    func harness(autoStream: AutoStreamMode = .none, autoStreamSec: Int = 10, withEngine: Bool = true) throws
        -> MonitorHarness
    {
        let database = try CribCallDatabase.inMemory()
        try database.updateMonitorSettings {
            $0.autoStream = autoStream
            $0.autoStreamSec = autoStreamSec
        }
        return try MonitorHarness(database: database, mediaEngine: withEngine ? engine : nil, streamClock: clock)
    }

    func newListener() throws -> DeviceIdentity {
        try DeviceIdentity.generate(now: Date())
    }

    /// START_STREAM_REQUEST, then the accepted response, the offer and the three candidates, checked exactly.
    func open(_ sessionId: String, _ mediaType: MediaType = .audio, on link: ListenerLink) async throws {
        try await link.send(.startStreamRequest(StartStreamRequest(sessionId: sessionId, mediaType: mediaType)))
        let expected: [ControlMessage] =
            [
                .startStreamResponse(StartStreamResponse(sessionId: sessionId, accepted: true)),
                .webrtcOffer(
                    SessionDescription(
                        sessionId: sessionId,
                        sdp: InMemoryMediaPeer.offerSDP(sessionId: sessionId, mediaType: mediaType))),
            ]
            + InMemoryMediaPeer.candidates(for: .sender).map {
                .webrtcIce(IceCandidateMessage(sessionId: sessionId, candidate: $0))
            }
        #expect(await link.next(expected.count) == expected)
    }

    /// The listener's answer and candidates for `sessionId`.
    func answer(_ sessionId: String, on link: ListenerLink) async throws {
        try await link.send(.webrtcAnswer(SessionDescription(sessionId: sessionId, sdp: "answer for \(sessionId)")))
        for candidate in InMemoryMediaPeer.candidates(for: .receiver) {
            try await link.send(.webrtcIce(IceCandidateMessage(sessionId: sessionId, candidate: candidate)))
        }
    }

    func sender(_ sessionId: String) throws -> InMemoryMediaPeer {
        let peers = engine.peers(sessionId: sessionId)
        #expect(peers.count == 1, "one sender per stream")
        return try #require(peers.first)
    }

    @Test(
        "an accepted stream: the sender's offer and candidates reach the listener, its answer and candidates the sender"
    )
    func offerAnswerIce() async throws {
        let harness = try harness()
        let link = try await harness.trustedLink(try newListener())
        try await open("S1", .audioVideo, on: link)
        try await answer("S1", on: link)
        #expect(try await link.sync().isEmpty, "no reply to the answer and candidates")

        let sender = try sender("S1")
        #expect(sender.role == .sender && sender.mediaType == .audioVideo)
        #expect(sender.remoteDescription == "answer for S1")
        #expect(sender.remoteCandidates == InMemoryMediaPeer.candidates(for: .receiver))
        #expect(sender.isFlowing && sender.endReason == nil)
        #expect(await harness.service.activeStreams.map(\.sessionId) == ["S1"])
        #expect(
            await harness.streamEvents(count: 1)
                == [
                    .streamStarted(
                        sessionId: "S1", listenerId: link.listenerId, mediaType: .audioVideo, automatic: false)
                ])
        await harness.stop()
    }

    @Test("END_STREAM from the listener stops the sender; a second one, or one for an unknown stream, is harmless")
    func endFromListener() async throws {
        let harness = try harness()
        let link = try await harness.trustedLink(try newListener())
        try await open("S1", on: link)
        try await link.send(.endStream(StreamReference(sessionId: "S1")))
        #expect(try await link.sync().isEmpty, "the listener is not told what it said itself")
        try await link.send(.endStream(StreamReference(sessionId: "S1")))
        try await link.send(.endStream(StreamReference(sessionId: "never-started")))
        #expect(try await link.sync().isEmpty, "no ERROR, and the connection stays open")

        #expect(try sender("S1").endReason == "stopped")
        #expect(await harness.service.activeStreams.isEmpty)
        let ended = await harness.streamEvents(count: 2).filter { if case .streamEnded = $0 { true } else { false } }
        #expect(ended == [.streamEnded(sessionId: "S1", reason: StreamEndReason.endedByListener)])
        await harness.stop()
    }

    @Test("the monitor ending a stream tells the listener once and stops the sender")
    func endFromMonitor() async throws {
        let harness = try harness()
        let link = try await harness.trustedLink(try newListener())
        try await open("S1", on: link)
        await harness.service.endStream(sessionId: "S1")
        await harness.service.endStream(sessionId: "S1")
        #expect(try await link.sync() == [.endStream(StreamReference(sessionId: "S1"))])
        #expect(try sender("S1").endReason == "stopped")
        #expect(
            await harness.streamEvents(count: 2).last
                == .streamEnded(sessionId: "S1", reason: StreamEndReason.endedByMonitor))
        await harness.stop()
    }

    @Test(
        "at most 4 concurrent streams: the fifth is declined with a reason and gets no sender; a freed slot is reused")
    func capacity() async throws {
        let harness = try harness()
        let first = try await harness.trustedLink(try newListener())
        let second = try await harness.trustedLink(try newListener())
        for index in 1...4 { try await open("S\(index)", on: index.isMultiple(of: 2) ? second : first) }
        try await second.send(.startStreamRequest(StartStreamRequest(sessionId: "S5", mediaType: .audio)))
        guard case .startStreamResponse(let response)? = await second.next() else {
            Issue.record("expected START_STREAM_RESPONSE")
            return
        }
        #expect(response.sessionId == "S5" && !response.accepted)
        #expect(response.reason?.contains("4") == true, "the reason says why: \(response.reason ?? "none")")
        #expect(try await second.sync().isEmpty, "no offer for a declined stream")
        #expect(engine.peers.count == 4)

        try await first.send(.endStream(StreamReference(sessionId: "S1")))
        #expect(try await first.sync().isEmpty)
        try await open("S5", on: second)
        await harness.stop()
    }

    @Test("a duplicate sessionId is a CONFLICT, from the same or another listener; the connection stays open")
    func duplicate() async throws {
        let harness = try harness()
        let owner = try await harness.trustedLink(try newListener())
        let other = try await harness.trustedLink(try newListener())
        try await open("S1", on: owner)
        for link in [owner, other] {
            try await link.send(.startStreamRequest(StartStreamRequest(sessionId: "S1", mediaType: .audio)))
            let replies = try await link.sync()
            guard replies.count == 1, case .error(let error) = replies[0] else {
                Issue.record("expected one ERROR, got \(replies)")
                continue
            }
            #expect(error.errorCode == .conflict && error.inReplyTo == "START_STREAM_REQUEST")
        }
        #expect(engine.peers.count == 1, "no second sender")
        #expect(try sender("S1").endReason == nil, "the running stream is untouched")
        await harness.stop()
    }

    @Test("signaling for another listener's stream is UNAUTHORIZED, for an unknown one PROTOCOL_ERROR; neither closes")
    func ownershipAndUnknown() async throws {
        let harness = try harness()
        let owner = try await harness.trustedLink(try newListener())
        let other = try await harness.trustedLink(try newListener())
        try await open("S1", on: owner)
        let candidate = InMemoryMediaPeer.candidates(for: .receiver)[0]
        let intrusions: [ControlMessage] = [
            .webrtcAnswer(SessionDescription(sessionId: "S1", sdp: "forged")),
            .webrtcIce(IceCandidateMessage(sessionId: "S1", candidate: candidate)),
            .pinStream(StreamReference(sessionId: "S1")),
            .endStream(StreamReference(sessionId: "S1")),
        ]
        for message in intrusions {
            try await other.send(message)
            let replies = try await other.sync()
            guard replies.count == 1, case .error(let error) = replies[0] else {
                Issue.record("expected one ERROR for \(message.typeName), got \(replies)")
                continue
            }
            #expect(error.errorCode == .unauthorized && error.inReplyTo == message.typeName)
        }
        let sender = try sender("S1")
        #expect(sender.remoteDescription == nil && sender.remoteCandidates.isEmpty && sender.endReason == nil)

        for message: ControlMessage in [
            .webrtcAnswer(SessionDescription(sessionId: "nope", sdp: "x")),
            .webrtcIce(IceCandidateMessage(sessionId: "nope", candidate: candidate)),
            .pinStream(StreamReference(sessionId: "nope")),
        ] {
            try await owner.send(message)
            let replies = try await owner.sync()
            guard replies.count == 1, case .error(let error) = replies[0] else {
                Issue.record("expected one ERROR for \(message.typeName), got \(replies)")
                continue
            }
            #expect(error.errorCode == .protocolError && error.inReplyTo == message.typeName)
            #expect(error.message.contains("nope"))
        }
        // The owner's stream still works.
        try await answer("S1", on: owner)
        #expect(try await owner.sync().isEmpty)
        #expect(sender.remoteDescription == "answer for S1" && sender.isFlowing)
        await harness.stop()
    }

    @Test("an untrusted device asking for a stream is UNAUTHORIZED and disconnected")
    func untrusted() async throws {
        let harness = try harness()
        let stranger = try await harness.connect(try newListener())
        try await stranger.send(.startStreamRequest(StartStreamRequest(sessionId: "S1", mediaType: .audio)))
        var frames = stranger.inbound.makeAsyncIterator()
        guard case .error(let error)? = try await stranger.nextMessage(&frames) else {
            Issue.record("expected ERROR UNAUTHORIZED")
            return
        }
        #expect(error.errorCode == .unauthorized)
        #expect(await stranger.closed() == .peerApplication(code: 2, reason: ""))
        #expect(engine.peers.isEmpty)
        await harness.stop()
    }

    @Test("a listener's connection closing ends its streams (and only its own)")
    func connectionClosed() async throws {
        let harness = try harness()
        let leaving = try await harness.trustedLink(try newListener())
        let staying = try await harness.trustedLink(try newListener())
        try await open("A", on: leaving)
        try await open("B", on: leaving)
        try await open("C", on: staying)
        await leaving.connection.close(code: 0)
        #expect(
            await harness.event { $0 == .streamEnded(sessionId: "B", reason: StreamEndReason.connectionClosed) } != nil)
        #expect(
            await harness.event { $0 == .streamEnded(sessionId: "A", reason: StreamEndReason.connectionClosed) } != nil)
        #expect(await harness.service.activeStreams.map(\.sessionId) == ["C"])
        #expect(try sender("A").endReason == "stopped")
        #expect(try sender("B").endReason == "stopped")
        #expect(try sender("C").endReason == nil)
        #expect(try await staying.sync().isEmpty)
        await harness.stop()
    }

    @Test("a failing media pipeline ends its stream: END_STREAM to the listener, the reason in the event")
    func mediaFailure() async throws {
        let harness = try harness()
        let link = try await harness.trustedLink(try newListener())
        try await open("S1", on: link)
        try sender("S1").fail(reason: "camera unplugged")
        #expect(await link.next() == .endStream(StreamReference(sessionId: "S1")))
        #expect(
            await harness.event {
                $0 == .streamEnded(sessionId: "S1", reason: "\(StreamEndReason.mediaFailed): camera unplugged")
            } != nil)

        engine.refuse("no GStreamer plugin for vp8enc")
        try await link.send(.startStreamRequest(StartStreamRequest(sessionId: "S2", mediaType: .audioVideo)))
        #expect(
            await link.next(2) == [
                .startStreamResponse(StartStreamResponse(sessionId: "S2", accepted: true)),
                .endStream(StreamReference(sessionId: "S2")),
            ])
        #expect(await harness.service.activeStreams.isEmpty)
        await harness.stop()
    }

    @Test("without a media engine a stream is declined with a reason and noise starts no stream")
    func noEngine() async throws {
        let harness = try harness(autoStream: .audio, withEngine: false)
        let link = try await harness.trustedLink(try newListener())
        try await link.send(.startStreamRequest(StartStreamRequest(sessionId: "S1", mediaType: .audio)))
        guard case .startStreamResponse(let response)? = await link.next() else {
            Issue.record("expected START_STREAM_RESPONSE")
            return
        }
        #expect(!response.accepted && response.reason?.isEmpty == false)
        try await harness.service.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
        guard case .noiseEvent(let event)? = await link.next() else {
            Issue.record("expected NOISE_EVENT")
            return
        }
        #expect(event.autoStreamSessionId == nil)
        await harness.stop()
    }

    // MARK: automatic streams

    /// Reports a noise event and reads the NOISE_EVENT, offer and candidates of the automatic stream it starts.
    func noiseWithAutoStream(_ harness: MonitorHarness, _ link: ListenerLink, mediaType: MediaType = .audio)
        async throws -> String?
    {
        try await harness.service.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
        guard case .noiseEvent(let event)? = await link.next(), let sessionId = event.autoStreamSessionId else {
            Issue.record("expected NOISE_EVENT with autoStreamSessionId")
            return nil
        }
        let offer = InMemoryMediaPeer.offerSDP(sessionId: sessionId, mediaType: mediaType)
        #expect(await link.next() == .webrtcOffer(SessionDescription(sessionId: sessionId, sdp: offer)))
        #expect(
            await link.next(3)
                == InMemoryMediaPeer.candidates(for: .sender).map {
                    .webrtcIce(IceCandidateMessage(sessionId: sessionId, candidate: $0))
                })
        return sessionId
    }

    @Test(
        "noise with autoStream on: NOISE_EVENT names a stream, its offer follows, ENDING_SOON 5 s before it stops after N s"
    )
    func autoStreamTimesOut() async throws {
        let harness = try harness(autoStream: .audio, autoStreamSec: 10)
        let link = try await harness.trustedLink(try newListener())
        let sessionId = try #require(try await noiseWithAutoStream(harness, link))
        try await answer(sessionId, on: link)
        #expect(try await link.sync().isEmpty)
        #expect(try sender(sessionId).isFlowing)
        #expect(
            await harness.event {
                $0
                    == .streamStarted(
                        sessionId: sessionId, listenerId: link.listenerId, mediaType: .audio, automatic: true)
            } != nil)

        clock.advance(by: .seconds(4))
        clock.advance(by: .seconds(1))
        #expect(
            await link.next()
                == .streamEndingSoon(StreamEndingSoon(sessionId: sessionId, secondsRemaining: 5)))
        clock.advance(by: .seconds(5))
        #expect(await link.next() == .endStream(StreamReference(sessionId: sessionId)))
        #expect(try sender(sessionId).endReason == "stopped")
        #expect(
            await harness.event { $0 == .streamEnded(sessionId: sessionId, reason: StreamEndReason.timedOut) } != nil)

        // The log keeps no stream id: a replayed event must not name a stream that is over.
        try await link.send(.eventsSince(EventsSince(afterSeq: 0)))
        guard case .noiseEvent(let replayed)? = await link.next() else {
            Issue.record("expected the replayed NOISE_EVENT")
            return
        }
        #expect(replayed.replayed == true && replayed.autoStreamSessionId == nil)
        await harness.stop()
    }

    @Test("PIN_STREAM keeps an automatic stream open past its time until END_STREAM")
    func pinKeepsStreamOpen() async throws {
        let harness = try harness(autoStream: .audioVideo, autoStreamSec: 10)
        let link = try await harness.trustedLink(try newListener())
        let sessionId = try #require(try await noiseWithAutoStream(harness, link, mediaType: .audioVideo))
        try await answer(sessionId, on: link)
        clock.advance(by: .seconds(5))
        #expect(
            await link.next()
                == .streamEndingSoon(StreamEndingSoon(sessionId: sessionId, secondsRemaining: 5)))

        try await link.send(.pinStream(StreamReference(sessionId: sessionId)))
        #expect(try await link.sync().isEmpty, "PIN_STREAM needs no reply")
        clock.advance(by: .seconds(600))
        try await Task.sleep(for: .milliseconds(200))  // room for a wrongly armed timer to fire
        #expect(try await link.sync().isEmpty, "no END_STREAM once pinned")
        #expect(try sender(sessionId).endReason == nil)
        #expect(await harness.service.activeStreams.first?.autoStopAt == nil)

        try await link.send(.endStream(StreamReference(sessionId: sessionId)))
        #expect(try await link.sync().isEmpty)
        #expect(try sender(sessionId).endReason == "stopped")
        #expect(
            await harness.event {
                $0 == .streamEnded(sessionId: sessionId, reason: StreamEndReason.endedByListener)
            } != nil)
        await harness.stop()
    }

    @Test("an automatic stream the listener ends at once (it wants notifications only) stops its sender")
    func autoStreamDeclined() async throws {
        let harness = try harness(autoStream: .audio)
        let link = try await harness.trustedLink(try newListener())
        try await harness.service.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
        guard case .noiseEvent(let event)? = await link.next(), let sessionId = event.autoStreamSessionId else {
            Issue.record("expected NOISE_EVENT with autoStreamSessionId")
            return
        }
        try await link.send(.endStream(StreamReference(sessionId: sessionId)))
        #expect(
            await harness.event {
                $0 == .streamEnded(sessionId: sessionId, reason: StreamEndReason.endedByListener)
            } != nil)
        #expect(await harness.service.activeStreams.isEmpty)
        // The sender, if it was made before the END_STREAM, is stopped; late candidates are dropped silently.
        for _ in 0..<100 where engine.peers(sessionId: sessionId).contains(where: { $0.endReason == nil }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(engine.peers(sessionId: sessionId).allSatisfy { $0.endReason == "stopped" })
        try await link.send(
            .webrtcIce(
                IceCandidateMessage(
                    sessionId: sessionId,
                    candidate: InMemoryMediaPeer.candidates(for: .receiver)[0])))
        #expect(
            try await link.sync().allSatisfy { message in
                switch message {
                case .webrtcOffer, .webrtcIce: true  // what the sender said before the END_STREAM was handled
                default: false
                }
            })
        await harness.stop()
    }

    @Test("no automatic stream when autoStream is none, nor for a listener that is already streaming")
    func noAutoStream() async throws {
        let off = try harness(autoStream: .none)
        let link = try await off.trustedLink(try newListener())
        try await off.service.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
        guard case .noiseEvent(let quiet)? = await link.next() else {
            Issue.record("expected NOISE_EVENT")
            return
        }
        #expect(quiet.autoStreamSessionId == nil)
        #expect(engine.peers.isEmpty)
        await off.stop()

        let on = try harness(autoStream: .audio)
        let watching = try await on.trustedLink(try newListener())
        let idle = try await on.trustedLink(try newListener())
        try await open("S1", on: watching)
        try await on.service.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
        guard case .noiseEvent(let forWatcher)? = await watching.next(),
            case .noiseEvent(let forIdle)? = await idle.next()
        else {
            Issue.record("expected NOISE_EVENTs")
            return
        }
        #expect(forWatcher.autoStreamSessionId == nil)
        #expect(forIdle.autoStreamSessionId != nil && forIdle.seq == forWatcher.seq)
        await on.stop()
    }
}
