import ControlTransport
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DeviceIdentity
import Foundation
import QUIC
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17 item 13: the monitor's disk fills up while it logs alerts. It says so clearly, keeps alerting the
/// connected listeners live, and logs again once there is room (after the alerts it could not keep).
///
/// A real full file system: the monitor runs in a mount namespace of its own with its data directory on a 16 MB
/// tmpfs (`unshare`, root: CI and `make test` run as root), which the test fills through `/proc/PID/root`.
@Suite(
    "cribcall monitor on a full disk", .serialized, .heavy(cores: 0.5, "a monitor with a camera"),
    .enabled(if: canMountTmpfs()))
struct DiskFullTests {
    @Test("alerts raised while the disk is full go to the listener live with a clear error; logging resumes after")
    func fullDisk() async throws {
        let seed = try Subprocess.temporaryDirectory("cribcall-seed")
        let mountPoint = try Subprocess.temporaryDirectory("cribcall-tmpfs")
        defer {
            try? FileManager.default.removeItem(at: seed)
            try? FileManager.default.removeItem(at: mountPoint)
        }
        let cribcall = try Subprocess.builtProduct("cribcall")
        let identity = try await Subprocess.run(cribcall, ["identity", "--json", "--data-dir", seed.path])
        let monitorFingerprint = try #require(
            jsonObject(identity.stdoutText)?["certFingerprint"] as? String, "\(identity.stdoutText)")
        let listener = try DeviceIdentity.generate(now: Date())
        try CribCallDatabase(directory: seed).trust(listener, as: "dads-laptop", name: "Dad's laptop")

        let script = #"mount -t tmpfs -o size=16m,mode=0700 tmpfs "$0" && cp -a "$1"/. "$0"/ && shift && exec "$@""#
        let monitor = try BackgroundProcess(
            "/usr/bin/unshare",
            [
                "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, mountPoint.path, seed.path,
                cribcall, "monitor", "--data-dir", mountPoint.path, "--safety", "--video-source", "test",
                "--audio-source", "test:silence", "--port", "0", "--json", "--no-discovery",
            ])
        defer { Task { await monitor.stop() } }
        let ready = try await monitor.ready("cribcall monitor in its mount namespace") {
            $0.contains(#""event":"ready""#)
        }
        let port = try #require(jsonObject(ready)?["port"] as? Int)
        // The data directory as the monitor sees it (its mount namespace), reached through its /proc entry.
        let inside = URL(fileURLWithPath: "/proc/\(monitor.processIdentifier)/root\(mountPoint.path)")
        let data = ["--data-dir", inside.path]

        let connection = try await QUICConnector(identity: listener)
            .connect(
                host: "127.0.0.1", port: port,
                pinnedFingerprint: try #require(CertificateFingerprint(hex: monitorFingerprint)))
        try await connection.send(.ping(Ping(timestamp: 1)))  // opens the control stream
        var frames = connection.inbound.makeAsyncIterator()
        func nextAlert() async throws -> SafetyAlert? {
            while let frame = try await frames.next() {
                if case .safetyAlert(let alert) = try ControlMessageCodec.decode(payload: frame) { return alert }
            }
            return nil
        }

        func trigger(_ kind: String) async throws -> Subprocess.Result {
            try await Subprocess.run(cribcall, ["alert", "trigger", kind, "--json"] + data)
        }
        #expect(
            await monitor.line(timeout: .seconds(30)) { $0.contains(#""monitoring":"active""#) } != nil,
            "\(monitor.output.suffix(5))")
        #expect(try await trigger("face_covered").status == 0)
        let logged = try #require(try await nextAlert(), "\(monitor.output.suffix(8))")

        // Fill the file system to the last byte.
        let filler = inside.appendingPathComponent("filler")
        FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        let block = Data(count: 64 * 1024)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()

        let whileFull = try await trigger("on_stomach")
        #expect(whileFull.status == 0, "the alert is raised although it cannot be logged: \(whileFull.stderrText)")
        let live = try #require(try await nextAlert(), "the listener got no alert while the disk was full")
        #expect(live.kind.rawValue == "on_stomach" && live.seq == logged.seq + 1)
        let complaint = await monitor.line { $0.contains(#""event":"event_not_logged""#) }
        #expect(complaint?.contains("disk is full") == true, "no clear error: \(monitor.output.suffix(5))")

        // Room again: the next alert is logged, after the one the log could not keep.
        try FileManager.default.removeItem(at: filler)
        #expect(try await trigger("face_covered").status == 0)
        let after = try #require(try await nextAlert())
        #expect(after.seq == live.seq + 1)
        try await connection.send(.eventsSince(EventsSince(afterSeq: 0)))
        var replayed: [Int64] = []
        while replayed.last != after.seq, let frame = try await frames.next() {
            if case .safetyAlert(let alert) = try ControlMessageCodec.decode(payload: frame), alert.replayed == true {
                replayed.append(alert.seq)
            }
        }
        #expect(replayed == [logged.seq, after.seq], "the log keeps what it could, in order")
        await connection.close(code: 0)
    }
}

/// Whether this process may mount a tmpfs in a mount namespace of its own (says loudly when not).
private func canMountTmpfs() -> Bool {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
        print("⚠️  SKIPPED cribcall monitor on a full disk: needs root and unshare (CI and `make test` run as root)")
        return false
    }
    return true
}
