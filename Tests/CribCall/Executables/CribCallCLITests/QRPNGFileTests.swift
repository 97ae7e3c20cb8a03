import Foundation
import TestSupport
import Testing

/// `cribcall monitor --qr-png FILE`, through the built executable (issue 17 item 7): the file holds a live one-time
/// pairing token, so it is the user's only (0600), never written through a symbolic link, and gone once the token is
/// used or the monitor stops.
@Suite("cribcall monitor --qr-png", .serialized, .heavy(cores: 0.5, "a monitor and a listener"))
struct QRPNGFileTests {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    static func exists(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)) != nil  // a dangling symbolic link counts
    }

    @Test("the PNG is written 0600 (an older 0644 file replaced), and removed when the monitor stops")
    func privateUntilStopped() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-qr-png")
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("pair.png").path
        #expect(
            FileManager.default.createFile(
                atPath: png, contents: Data("stale".utf8), attributes: [.posixPermissions: 0o644]))
        let monitor = try await PairingMonitor.start(
            data: directory.appendingPathComponent("monitor"), ["--qr-png", png])
        defer { Task { await monitor.process.stop() } }

        // The file is written before the qr line is printed.
        #expect(try Self.mode(png) == 0o600, "the pairing code is readable by others")
        let bytes = try #require(FileManager.default.contents(atPath: png))
        #expect(Array(bytes.prefix(8)) == Self.pngSignature, "a PNG image, not the stale file")

        #expect(await monitor.process.stop(grace: .seconds(20)) == 0, "SIGTERM stops it cleanly")
        #expect(!Self.exists(png), "the pairing code outlives the monitor: \(monitor.process.errorOutput)")
    }

    @Test("a symbolic link at FILE is refused with a clear error: nothing written, its target untouched")
    func symlinkRefused() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-qr-png")
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("pair.png").path
        let target = directory.appendingPathComponent("target").path
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        try FileManager.default.createSymbolicLink(atPath: png, withDestinationPath: target)

        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--port", "0", "--json", "--no-discovery", "--audio-source", "test:silence",
                "--qr-png", png, "--data-dir", directory.appendingPathComponent("monitor").path,
            ])
        defer { Task { await monitor.stop() } }
        #expect(await monitor.waitForExit(timeout: .seconds(60)) == 64, "refused as a usage error: \(monitor.output)")
        #expect(
            monitor.errorOutput.contains("--qr-png: \(png) is a symbolic link, not a regular file: refusing"),
            "stderr: \(monitor.errorOutput)")
        #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8), "the link's target was written")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: png) == target)
    }

    @Test("a listener pairing by the code uses its token up: the PNG is removed")
    func removedWhenUsed() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-qr-png")
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("pair.png").path
        let monitor = try await PairingMonitor.start(
            data: directory.appendingPathComponent("monitor"), ["--qr-png", png])
        defer { Task { await monitor.process.stop() } }
        #expect(Self.exists(png))

        let pair = try await monitor.pair(listener: directory.appendingPathComponent("listener"))
        #expect(pair.status == 0, "pair: \(pair.stdoutText) \(pair.stderrText)")
        let paired = await monitor.process.line { $0.contains(#""event":"paired""#) }
        #expect(paired?.contains(#""method":"qr""#) == true, "the monitor paired by QR code: \(paired ?? "nothing")")
        try await eventually("the used code's PNG to be removed") { !Self.exists(png) }
        await monitor.process.stop(grace: .seconds(20))  // before its data directory is removed
    }
}
