import CribCallMonitor
import CribCallProtocol
import CribCallRuntime
import CribCallTestSupport
import Foundation
import TestSupport
import Testing

@testable import CribCallApp

/// Files that hold a secret for a while (issue 17 item 7): `app-url` and the `--qr-png` pairing code. They are the
/// owner's only, never written through a symbolic link, and the pairing code is gone once its token cannot pair.
@Suite("Private files: app-url and the pairing QR code's PNG")
struct PrivateFileTests {
    /// Runs `body` with a fresh directory.
    func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-private")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    static func exists(_ path: String) -> Bool {
        // lstat, not fileExists: a dangling symbolic link is something too.
        (try? FileManager.default.attributesOfItem(atPath: path)) != nil
    }

    @Test("a write creates the file 0600, replacing an older regular file (its permissions are not kept)")
    func write() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("secret").path
            #expect(
                FileManager.default.createFile(
                    atPath: path, contents: Data("old".utf8),
                    attributes: [
                        .posixPermissions: 0o644
                    ]))
            let file = PrivateFile(path: path)
            try file.write(Data("new".utf8))
            #expect(try Self.mode(path) == 0o600)
            #expect(FileManager.default.contents(atPath: path) == Data("new".utf8))
            file.remove()
            #expect(!Self.exists(path))
            file.remove()  // nothing there: nothing happens
        }
    }

    @Test("a symbolic link at the path is refused, with a clear error, and it and its target stay as they were")
    func symlinkRefused() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("secret").path
            let target = directory.appendingPathComponent("target").path
            #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            let file = PrivateFile(path: path)
            let refusal = PrivateFile.Failure.notARegularFile(path: path, kind: "a symbolic link")
            #expect(throws: refusal) { try file.checkReplaceable() }
            #expect(throws: refusal) { try file.write(Data("secret".utf8)) }
            #expect("\(refusal)".contains("is a symbolic link, not a regular file: refusing to write"))
            #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == target)

            // A dangling link is not followed to create its target either.
            let dangling = directory.appendingPathComponent("dangling").path
            let nowhere = directory.appendingPathComponent("nowhere").path
            try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: nowhere)
            #expect(throws: PrivateFile.Failure.self) { try PrivateFile(path: dangling).write(Data("x".utf8)) }
            #expect(!Self.exists(nowhere))
        }
    }

    @Test("a directory at the path is refused")
    func directoryRefused() async throws {
        try await withDirectory { directory in
            #expect(throws: PrivateFile.Failure.notARegularFile(path: directory.path, kind: "a directory")) {
                try PrivateFile(path: directory.path).write(Data("x".utf8))
            }
        }
    }

    @Test("app-url is a private file: 0600, a symbolic link there is refused, removed when it holds the address")
    func appAddressFile() async throws {
        try await withDirectory { directory in
            let data = CribCallDataDirectory(path: directory.path)
            let file = AppAddressFile(in: data)
            try file.write("http://127.0.0.1:4000/#secret")
            #expect(try Self.mode(file.url.path) == 0o600)
            #expect(file.read() == "http://127.0.0.1:4000/#secret")
            file.remove(ifHolding: "http://127.0.0.1:4001/#other")
            #expect(Self.exists(file.url.path))
            file.remove(ifHolding: "http://127.0.0.1:4000/#secret")
            #expect(!Self.exists(file.url.path))

            let target = directory.appendingPathComponent("target").path
            try FileManager.default.createSymbolicLink(atPath: file.url.path, withDestinationPath: target)
            #expect(throws: CommandFailure.self) { try file.write("http://127.0.0.1:4000/#secret") }
            #expect(!Self.exists(target))
        }
    }

    // MARK: the pairing QR code

    static func qr(_ token: UInt8) -> MonitorEvent {
        let payload = QRPairingPayload(
            monitorId: "0f1e2d3c-0000-4000-8000-000000000001", monitorName: "Nursery",
            monitorCertFingerprint: String(repeating: "ab", count: 32), monitorPublicKey: nil,
            pairingToken: PairingToken(bytes: [UInt8](repeating: token, count: 16))!)
        return .qr(payload: payload, text: payload.qrText)
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    @Test("a shown code is written as a 0600 PNG; used up by a QR pairing it is removed, a PIN pairing leaves it")
    func qrUsed() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("pair.png").path
            let qrFile = PairingQRFile(path: path, clock: ManualStreamClock())
            #expect(try qrFile.observe(Self.qr(1)))
            #expect(try Self.mode(path) == 0o600)
            let png = try #require(FileManager.default.contents(atPath: path))
            #expect(Array(png.prefix(8)) == Self.pngSignature)

            try qrFile.observe(.paired(listenerId: "l", listenerName: "Dad", certFingerprint: "f", method: "pin"))
            #expect(Self.exists(path), "a PIN pairing does not use the code's token")
            try qrFile.observe(.paired(listenerId: "l", listenerName: "Mum", certFingerprint: "f", method: "qr"))
            #expect(!Self.exists(path), "the token is used up")
        }
    }

    @Test("a new code replaces the file; the file goes when the token expires, not when the replaced one would")
    func qrReplacedAndExpired() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("pair.png").path
            let clock = ManualStreamClock()
            let qrFile = PairingQRFile(path: path, lifetime: .seconds(300), clock: clock)
            try qrFile.observe(Self.qr(1))
            let first = try #require(FileManager.default.contents(atPath: path))
            clock.advance(by: .seconds(200))
            try qrFile.observe(Self.qr(2))
            let second = try #require(FileManager.default.contents(atPath: path))
            #expect(first != second, "the new code is written")

            clock.advance(by: .seconds(150))  // the first code's token is dead, the second's lives 150 s more
            try await Task.sleep(for: .milliseconds(200))  // time for a wrongly kept timer to act
            #expect(FileManager.default.contents(atPath: path) == second, "the live code stays")

            clock.advance(by: .seconds(150))
            try await eventually("the expired code's file to be removed") { !Self.exists(path) }
        }
    }

    @Test("stopping removes the code; a symbolic link in its place is refused and its target untouched")
    func qrStoppedAndRefused() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("pair.png").path
            let qrFile = PairingQRFile(path: path, clock: ManualStreamClock())
            try qrFile.observe(Self.qr(1))
            qrFile.remove()
            #expect(!Self.exists(path))

            let target = directory.appendingPathComponent("target").path
            #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            #expect(throws: PrivateFile.Failure.notARegularFile(path: path, kind: "a symbolic link")) {
                try qrFile.observe(Self.qr(2))
            }
            qrFile.remove()
            #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == target, "nothing written here")
        }
    }
}
