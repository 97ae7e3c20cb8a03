import ControlTransport
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DeviceIdentity
import Foundation
import QUIC
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17 item 13: the monitor is killed (SIGKILL, no chance to tidy up) while it writes events, while it pairs
/// and while it replays. Restarted on the same data directory it has lost no event it reported and no pairing.
@Suite(
    "cribcall monitor killed and restarted", .serialized, .heavy(cores: 0.5, "monitor processes killed with SIGKILL"))
struct CrashRecoveryTests {
    let cribcall: String
    let directory: URL

    init() throws {
        cribcall = try Subprocess.builtProduct("cribcall")
        directory = try Subprocess.temporaryDirectory("cribcall-crash")
    }

    /// Starts the monitor on `port`, or (nil) on a port it can have again after a restart.
    func startMonitor(_ extra: [String] = [], port: Int? = nil) async throws -> (BackgroundProcess, Int) {
        guard let port else {
            return try await FixedPort.belowEphemeralRange { try await startMonitor(extra, port: $0) }
        }
        let monitor = try BackgroundProcess(
            cribcall,
            [
                "monitor", "--data-dir", directory.path, "--safety", "--video-source", "test", "--audio-source",
                "test:silence", "--port", "\(port)", "--json", "--no-discovery",
            ] + extra)
        let ready = try await monitor.ready("cribcall monitor") { $0.contains(#""event":"ready""#) }
        return (monitor, try #require(jsonObject(ready)?["port"] as? Int))
    }

    func killHard(_ process: BackgroundProcess) async {
        kill(process.processIdentifier, SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(10))
    }

    @Test("killed while alerts are being logged: every alert it reported is there after a restart, seq goes on")
    func killedWhileWriting() async throws {
        let (monitor, _) = try await startMonitor()
        _ = await monitor.line(timeout: .seconds(30)) { $0.contains(#""monitoring":"active""#) }
        let data = ["--data-dir", directory.path]
        // Triggers keep coming; the monitor dies under them once three were raised.
        let raised = RaisedCount()
        let reported = try await withThrowingTaskGroup(of: Int64?.self) { group in
            for index in 0..<40 {
                group.addTask {
                    if index >= 4 { try await Task.sleep(for: .milliseconds(15 * index)) }
                    let run = try await Subprocess.run(
                        self.cribcall, ["alert", "trigger", "face_covered", "--json"] + data)
                    guard run.status == 0 else { return nil }
                    raised.count.add(1, ordering: .relaxed)
                    return (jsonObject(run.stdoutText)?["seq"] as? NSNumber)?.int64Value
                }
            }
            group.addTask {
                for _ in 0..<6_000 where raised.count.load(ordering: .relaxed) < 3 {  // at most a minute
                    try await Task.sleep(for: .milliseconds(10))
                }
                await self.killHard(monitor)
                return nil
            }
            var seqs: [Int64] = []
            for try await seq in group { if let seq { seqs.append(seq) } }
            return seqs.sorted()
        }
        #expect(!reported.isEmpty, "no alert was raised before the kill")
        let database = try CribCallDatabase(directory: directory)
        let logged = try database.noiseEvents(afterSeq: 0, limit: 10_000).map(\.seq)
        #expect(Set(reported).isSubset(of: Set(logged)), "reported \(reported), logged \(logged)")

        let (again, _) = try await startMonitor()
        _ = await again.line(timeout: .seconds(30)) { $0.contains(#""monitoring":"active""#) }
        let next = try await Subprocess.run(cribcall, ["alert", "trigger", "crying", "--json"] + data)
        let seq = try #require((jsonObject(next.stdoutText)?["seq"] as? NSNumber)?.int64Value, "\(next.stderrText)")
        #expect(seq > (logged.max() ?? 0))
        await again.stop()
    }

    @Test("killed right after pairing: the pairing is kept, and the listener is served as paired")
    func killedWhilePairing() async throws {
        let (monitor, port) = try await startMonitor(["--qr"])
        let qr = try #require(await monitor.line { $0.contains(#""event":"qr""#) }.flatMap(jsonObject))
        let text = try #require(qr["text"] as? String, "\(qr)")
        let listenerData = directory.appendingPathComponent("listener").path
        let pair = try BackgroundProcess(
            cribcall,
            [
                "pair", "--qr", text, "--address", "127.0.0.1:\(port)", "--name", "Dad's laptop", "--data-dir",
                listenerData,
            ])
        // The moment the monitor reports the pairing, it dies.
        let paired = await monitor.line(timeout: .seconds(30)) { $0.contains(#""event":"paired""#) }
        await killHard(monitor)
        let listenerId = try #require(paired.flatMap(jsonObject)?["listenerId"] as? String, "\(monitor.output)")
        // `pair` either learned it was paired before the kill (exit 0) or gives up on the dead monitor.
        let pairStatus = await pair.waitForExit(timeout: .seconds(10))
        await pair.stop()

        let kept = try CribCallDatabase(directory: directory).trustedListeners().map(\.listenerId)
        #expect(kept == [listenerId], "the monitor reported the pairing, so it must keep it")
        // Restarted on the same port: the listener (if `pair` learned it was paired) connects as paired.
        let (again, _) = try await startMonitor(port: port)
        if pairStatus == 0 {
            let listen = try BackgroundProcess(cribcall, ["listen", "--json", "--data-dir", listenerData])
            let connected = await again.line(timeout: .seconds(30)) { $0.contains(#""event":"listener_connected""#) }
            #expect(connected?.contains(#""trusted":true"#) == true, "\(again.output.suffix(5))")
            await listen.stop()
        }
        await again.stop()
    }

    @Test("killed in the middle of a replay: after the restart the listener gets the rest, each event once, in order")
    func killedWhileReplaying() async throws {
        let listener = try DeviceIdentity.generate(now: Date())
        let database = try CribCallDatabase(directory: directory)
        try database.trust(listener, as: "mums-phone", name: "Mum's phone")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let total = 3_000
        for index in 0..<total {
            try database.appendNoiseEvent(
                eventId: UUID().uuidString.lowercased(), kind: "noise", timestamp: now - Int64(total - index) * 10,
                peakLevel: 70, autoStreamSessionId: nil)
        }
        let (monitor, port) = try await startMonitor()
        let hex = try #require(jsonObject(monitor.output[0])?["certFingerprint"] as? String)
        let fingerprint = try #require(CertificateFingerprint(hex: hex))
        var received: [Int64] = []

        func replay(after seq: Int64, killing victim: BackgroundProcess?) async throws {
            let connection = try await QUICConnector(identity: listener)
                .connect(host: "127.0.0.1", port: port, pinnedFingerprint: fingerprint)
            try await connection.send(.eventsSince(EventsSince(afterSeq: seq)))
            var frames = connection.inbound.makeAsyncIterator()
            while received.count < total {
                guard let frame = try? await frames.next() else { break }  // the monitor died
                guard case .noiseEvent(let event) = try ControlMessageCodec.decode(payload: frame) else { continue }
                received.append(event.seq)
                if let victim, received.count == 300 {
                    await killHard(victim)
                    break  // No CONNECTION_CLOSE comes from a killed process: stop reading now, not at idle timeout.
                }
            }
            await connection.close(code: 0)
        }
        try await replay(after: 0, killing: monitor)
        #expect(received.count < total, "the replay finished before the kill")
        let (again, _) = try await startMonitor(port: port)
        try await replay(after: received.last ?? 0, killing: nil)
        let logged = try database.noiseEvents(afterSeq: 0, limit: 10_000).map(\.seq)
        #expect(received == logged, "each kept event once, in order (\(received.count) of \(logged.count))")
        await again.stop()
    }
}

/// Alerts raised so far, shared by the tasks that raise them.
private final class RaisedCount: Sendable {
    let count = Atomic<Int>(0)
}
