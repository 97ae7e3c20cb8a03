import Foundation
import TestSupport
import Testing

/// The real `cribcall monitor` streams to a listener built on stacks nobody here wrote: aioquic for the control
/// channel and QR pairing, aiortc for SDP, trickled ICE, DTLS-SRTP and Opus (Tests/Interop/webrtc/stream_client.py).
/// The monitor runs its safety detectors too, so the client also gets PROTOCOL.md §11's messages, which a listener
/// without CribAlert ignores.
@Suite(.serialized, .heavy("a cribcall monitor process and an aioquic + aiortc listener"))
struct MonitorStreamInteropTests {
    @Test("an aioquic + aiortc listener pairs by QR, starts a stream and decodes ≥ 2 s of the monitor's Opus")
    func aiortcListenerDecodesTheMonitorsStream() async throws {
        guard InteropPeers.pythonAvailable(for: "monitor stream interop (aioquic + aiortc)"),
            let python = InteropPeers.python
        else { return }
        let dataDirectory = try Subprocess.temporaryDirectory("monitor-stream-interop")
        defer { try? FileManager.default.removeItem(at: dataDirectory) }
        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--name", "Interop Nursery", "--data-dir", dataDirectory.path, "--port", "0",
                "--host", "127.0.0.1", "--no-discovery", "--audio-source", "test:cry", "--ice-address", "127.0.0.1",
                "--qr", "--json", "--safety", "--video-source", "test",
            ])
        let started = ContinuousClock.now
        var client: BackgroundProcess?
        do {
            let readyLine = try await monitor.ready("cribcall monitor") { Self.event($0) == "ready" }
            let ready = try #require(Self.object(readyLine), "monitor's ready line: \(readyLine)")
            let port = try #require(ready["port"] as? Int)
            let qrLine = await monitor.line(timeout: .seconds(10)) { Self.event($0) == "qr" }
            let qrText = try #require(qrLine.flatMap(Self.object)?["text"] as? String, "no qr line: \(monitor.output)")
            let readyAfter = ContinuousClock.now - started

            let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/webrtc/stream_client.py").path
            let peer = try BackgroundProcess(
                python,
                [
                    script, "--host", "127.0.0.1", "--port", String(port), "--qr", qrText, "--seconds", "3",
                    "--timeout", "40",
                ])
            client = peer
            try await peer.ready("stream_client.py") { Self.event($0) == "ready" }
            let status = await peer.waitForExit(timeout: .seconds(50))
            let events = peer.output.compactMap(Self.object)
            let log = "client stdout:\n\(peer.output.joined(separator: "\n"))\nclient stderr:\n\(peer.errorOutput)"
            #expect(status == 0, "client exit status \(status.map(String.init) ?? "none (killed)")\n\(log)")
            #expect(!events.contains { $0["event"] as? String == "error" }, "\(log)")
            // A listener without CribAlert got the safety status and went on: nothing else changed.
            #expect(peer.errorOutput.contains("ignored: SAFETY_STATUS"), "\(log)")

            // Paired by QR (with a valid confirmTag, checked by the client), on both sides.
            let paired = try #require(events.first { $0["event"] as? String == "paired" }, "\(log)")
            let listenerId = try #require(paired["listenerId"] as? String)
            let monitorPaired = await monitor.line(timeout: .seconds(5)) { Self.event($0) == "paired" }
            let monitorPairedObject = try #require(monitorPaired.flatMap(Self.object), "monitor: \(monitor.output)")
            #expect(monitorPairedObject["method"] as? String == "qr")
            #expect(monitorPairedObject["listenerId"] as? String == listenerId)

            // aiortc negotiated Opus and decoded at least 2 s of it at 48 kHz.
            let decoded = try #require(events.first { $0["event"] as? String == "decoded" }, "\(log)")
            let samples = decoded["samples"] as? Int ?? 0
            #expect(samples >= 2 * 48_000, "decoded \(samples) samples\n\(log)")
            #expect(decoded["sampleRate"] as? Int == 48_000)
            #expect(decoded["sampleRates"] as? [Int] == [48_000])
            #expect(decoded["codec"] as? String == "opus")

            // The monitor reported the stream start, then its end by the listener's END_STREAM.
            let ended = await monitor.line(timeout: .seconds(10)) { Self.event($0) == "stream_ended" }
            let lines = monitor.output
            let startIndex = try #require(lines.firstIndex { Self.event($0) == "stream_started" }, "\(lines)")
            let endIndex = try #require(lines.firstIndex { Self.event($0) == "stream_ended" }, "\(lines)")
            #expect(startIndex < endIndex)
            let start = try #require(Self.object(lines[startIndex]))
            let end = try #require(ended.flatMap(Self.object))
            #expect(start["listenerId"] as? String == listenerId)
            #expect(start["mediaType"] as? String == "audio")
            #expect(start["automatic"] as? Bool == false)
            #expect(end["sessionId"] as? String == start["sessionId"] as? String)
            #expect(end["reason"] as? String == "ended_by_listener", "stream_ended: \(end)")
            #expect(monitor.status == nil, "the monitor exited: \(monitor.errorOutput)")

            let firstFrame = events.first { $0["event"] as? String == "first_frame" }?["ms"] ?? "?"
            print(
                "monitor stream interop: ready after \(readyAfter), client first frame at \(firstFrame) ms, "
                    + "\(samples) samples, whole test \(ContinuousClock.now - started)")
        } catch {
            await client?.stop()
            await monitor.stop()
            throw error
        }
        await client?.stop()
        await monitor.stop()
    }

    private static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    private static func event(_ line: String) -> String? {
        object(line)?["event"] as? String
    }
}
