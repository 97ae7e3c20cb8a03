import CribCallProtocol
import Testing

@Suite("StreamSessions: duplicates, idempotent END, capacity, auto-stop and PIN_STREAM (PROTOCOL.md §9)")
struct StreamSessionsTests {
    let t0 = ContinuousClock.now

    func request(_ id: String, _ media: MediaType = .audio) -> StartStreamRequest {
        StartStreamRequest(sessionId: id, mediaType: media)
    }

    @Test("an accepted request answers accepted:true and starts the media")
    func accept() {
        var streams = StreamSessions()
        let actions = streams.handleStart(request("S1", .audioVideo), from: 7)
        #expect(
            actions == [
                .send(.startStreamResponse(StartStreamResponse(sessionId: "S1", accepted: true)), to: 7),
                .startMedia(sessionId: "S1", mediaType: .audioVideo, connection: 7),
            ])
        #expect(streams.active.map(\.sessionId) == ["S1"])
    }

    @Test("a duplicate sessionId is a CONFLICT, whoever sends it")
    func duplicate() {
        var streams = StreamSessions()
        _ = streams.handleStart(request("S1"), from: 7)
        for connection: UInt64 in [7, 8] {
            let actions = streams.handleStart(request("S1"), from: connection)
            guard case .send(.error(let error), to: connection)? = actions.first, actions.count == 1 else {
                Issue.record("expected one ERROR, got \(actions)")
                continue
            }
            #expect(error.errorCode == .conflict && error.inReplyTo == "START_STREAM_REQUEST")
        }
        #expect(streams.active.count == 1)
    }

    @Test("END_STREAM is idempotent: the second and an unknown one do nothing and raise no error")
    func endIsIdempotent() {
        var streams = StreamSessions()
        _ = streams.handleStart(request("S1"), from: 7)
        #expect(streams.handleEnd(StreamReference(sessionId: "S1"), from: 7) == [.stopMedia(sessionId: "S1")])
        #expect(streams.handleEnd(StreamReference(sessionId: "S1"), from: 7).isEmpty)
        #expect(streams.handleEnd(StreamReference(sessionId: "nope"), from: 7).isEmpty)
        #expect(streams.active.isEmpty)
    }

    @Test("another listener cannot end or pin my stream")
    func ownership() {
        var streams = StreamSessions()
        _ = streams.startAutomatic(sessionId: "A1", mediaType: .audio, to: 7, duration: .seconds(60), now: t0)
        #expect(streams.handleEnd(StreamReference(sessionId: "A1"), from: 8).isEmpty)
        #expect(streams.handlePin(StreamReference(sessionId: "A1"), from: 8).isEmpty)
        #expect(streams.active.first?.autoStopAt == t0 + .seconds(60))
    }

    @Test("at most 4 concurrent streams; the fifth is declined with a reason, not an error")
    func capacity() {
        var streams = StreamSessions()
        for index in 1...4 { _ = streams.handleStart(request("S\(index)"), from: UInt64(index)) }
        let fifth = streams.handleStart(request("S5"), from: 5)
        guard case .send(.startStreamResponse(let response), to: 5)? = fifth.first, fifth.count == 1 else {
            Issue.record("expected a declining response, got \(fifth)")
            return
        }
        #expect(!response.accepted && response.reason?.isEmpty == false)
        #expect(
            streams.startAutomatic(sessionId: "A", mediaType: .audio, to: 1, duration: .seconds(30), now: t0).isEmpty)
        _ = streams.handleEnd(StreamReference(sessionId: "S1"), from: 1)
        #expect(streams.handleStart(request("S5"), from: 5).count == 2)
    }

    @Test("an automatic stream warns 5 s before its end, then ends itself with END_STREAM")
    func autoStop() {
        var streams = StreamSessions()
        #expect(StreamSessions.endingSoonWarning == .seconds(5))
        #expect(
            streams.startAutomatic(sessionId: "A1", mediaType: .audio, to: 3, duration: .seconds(30), now: t0)
                == [.startMedia(sessionId: "A1", mediaType: .audio, connection: 3)])
        #expect(streams.nextDeadline == t0 + .seconds(25))
        #expect(streams.tick(now: t0 + .seconds(24)).isEmpty)
        #expect(
            streams.tick(now: t0 + .seconds(25)) == [
                .send(.streamEndingSoon(StreamEndingSoon(sessionId: "A1", secondsRemaining: 5)), to: 3)
            ])
        #expect(streams.tick(now: t0 + .seconds(27)).isEmpty, "the warning is sent once")
        #expect(streams.nextDeadline == t0 + .seconds(30))
        #expect(
            streams.tick(now: t0 + .seconds(30)) == [
                .send(.endStream(StreamReference(sessionId: "A1")), to: 3), .stopMedia(sessionId: "A1"),
            ])
        #expect(streams.active.isEmpty && streams.nextDeadline == nil)
    }

    @Test("a stream no longer than the warning gets no separate warning, only its END_STREAM")
    func shortAutoStream() {
        var streams = StreamSessions()
        _ = streams.startAutomatic(sessionId: "A1", mediaType: .audio, to: 3, duration: .seconds(5), now: t0)
        #expect(streams.nextDeadline == t0 + .seconds(5))
        #expect(streams.tick(now: t0 + .seconds(4)).isEmpty)
        #expect(
            streams.tick(now: t0 + .seconds(5)) == [
                .send(.endStream(StreamReference(sessionId: "A1")), to: 3), .stopMedia(sessionId: "A1"),
            ])
    }

    @Test("a running stream can be looked up with its owner; an ended one cannot")
    func lookup() {
        var streams = StreamSessions()
        _ = streams.handleStart(request("S1"), from: 7)
        #expect(streams.stream("S1")?.connection == 7)
        #expect(streams.stream("S2") == nil)
        _ = streams.handleEnd(StreamReference(sessionId: "S1"), from: 7)
        #expect(streams.stream("S1") == nil)
    }

    @Test("PIN_STREAM cancels the auto-stop timer: the stream stays until ended")
    func pinCancelsTimer() {
        var streams = StreamSessions()
        _ = streams.startAutomatic(sessionId: "A1", mediaType: .audio, to: 3, duration: .seconds(30), now: t0)
        _ = streams.tick(now: t0 + .seconds(26))
        #expect(streams.handlePin(StreamReference(sessionId: "A1"), from: 3).isEmpty)
        #expect(streams.nextDeadline == nil)
        #expect(streams.tick(now: t0 + .seconds(3600)).isEmpty)
        #expect(streams.active.map(\.sessionId) == ["A1"])
        #expect(streams.handlePin(StreamReference(sessionId: "A1"), from: 3).isEmpty, "pinning twice is harmless")
    }

    @Test("a listener's streams stop when its connection closes")
    func connectionClosed() {
        var streams = StreamSessions()
        _ = streams.handleStart(request("S1"), from: 1)
        _ = streams.handleStart(request("S2"), from: 2)
        _ = streams.startAutomatic(sessionId: "A1", mediaType: .audio, to: 1, duration: .seconds(30), now: t0)
        #expect(Set(streams.connectionClosed(1)) == [.stopMedia(sessionId: "S1"), .stopMedia(sessionId: "A1")])
        #expect(streams.active.map(\.sessionId) == ["S2"])
    }

    @Test("the monitor ending a stream tells the listener")
    func monitorEnds() {
        var streams = StreamSessions()
        _ = streams.handleStart(request("S1"), from: 4)
        #expect(
            streams.end(sessionId: "S1") == [
                .send(.endStream(StreamReference(sessionId: "S1")), to: 4),
                .stopMedia(sessionId: "S1"),
            ])
        #expect(streams.end(sessionId: "S1").isEmpty)
    }

    @Test("an empty or huge sessionId is a PROTOCOL_ERROR")
    func badSessionId() {
        var streams = StreamSessions()
        for id in ["", String(repeating: "x", count: 129)] {
            guard case .send(.error(let error), _)? = streams.handleStart(request(id), from: 1).first else {
                Issue.record("expected an error for \(id.count)-byte id")
                continue
            }
            #expect(error.errorCode == .protocolError)
        }
    }
}
