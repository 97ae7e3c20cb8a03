import CribCallRuntime
import CribCallStore
import DeviceIdentity
import Foundation
import TestSupport
import Testing

@testable import CribCallApp

/// The cribcall program's work, called without a process (the CLI tests run the same through the binary).
@Suite("cribcall's commands as functions")
struct CribCallAppTests {
    static func fingerprint(_ byte: UInt8) -> CertificateFingerprint {
        CertificateFingerprint(hex: String(repeating: String(format: "%02x", byte), count: 32))!
    }

    static func listener(_ id: String, _ name: String) -> TrustedListenerRecord {
        TrustedListenerRecord(
            listenerId: id, name: name, publicKey: "", fingerprint: fingerprint(UInt8(id.count)),
            createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test("a listener is found by id or a unique prefix of at least 4 characters")
    func resolveListener() throws {
        let listeners = [Self.listener("abcd1111", "kitchen"), Self.listener("abcd2222", "bedroom")]
        #expect(try ListenersCommands.resolve("abcd2222", among: listeners).name == "bedroom")
        #expect(try ListenersCommands.resolve("abcd1", among: listeners).name == "kitchen")
        // Too short, ambiguous and unknown prefixes say what to do.
        #expect(throws: ListenersCommands.unknown("abc")) { try ListenersCommands.resolve("abc", among: listeners) }
        let ambiguous = #expect(throws: CribCallRuntimeError.self) {
            try ListenersCommands.resolve("abcd", among: listeners)
        }
        #expect(ambiguous?.message.contains("matches 2 listeners") == true)
        #expect(throws: ListenersCommands.unknown("ffff")) { try ListenersCommands.resolve("ffff", among: listeners) }
    }

    @Test("settings: every KEY=VALUE is checked before anything is written")
    func settings() throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-app")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = CribCallDataDirectory(path: directory.appendingPathComponent("data").path)
        // A typo in the second assignment writes nothing, and does not even create the directory.
        #expect(throws: CommandFailure.self) { try SettingsCommands.set(["threshold=55", "cooldown=3"], in: data) }
        #expect(throws: CommandFailure.self) { try SettingsCommands.set(["threshold=500"], in: data) }
        #expect(throws: CommandFailure.self) { try SettingsCommands.set(["threshold=5", "threshold=6"], in: data) }
        #expect(!FileManager.default.fileExists(atPath: data.url.path))
        let text = try SettingsCommands.set(["threshold=55", "autoStream=audio", "name=Nursery"], in: data)
        #expect(text.contains("threshold:        55") && text.contains("autoStream:       audio"))
        let safety = try SettingsCommands.set(
            ["sleepArea=0.2,0.1,0.6,0.8", "safetyAlerts=off", "stillnessMinutes=30", "crySensitivity=high"], in: data)
        #expect(safety.contains("sleepArea:        0.2,0.1,0.6,0.8") && safety.contains("safetyAlerts:     off"))
        #expect(safety.contains("stillnessMinutes: 30") && safety.contains("crySensitivity:   high"))
        #expect {
            try SettingsCommands.set(["sleepArea=0.9,0.9,0.5,0.5"], in: data)
        } throws: { error in
            "\(error)".contains("sleepArea: the sleep area must lie inside the frame")
        }
        #expect(throws: CommandFailure.self) { try SettingsCommands.set(["safetyAlerts=maybe"], in: data) }
        #expect {
            try SettingsCommands.set(["monitoring=paused"], in: data)
        } throws: { error in
            "\(error)".contains(#"monitoring must be on or off (got "paused")"#)
        }
        #expect(try SettingsCommands.set(["monitoring=off"], in: data).hasPrefix("monitoring:       off\n"))
        let json = try SettingsCommands.show(in: data, json: true)
        #expect(json.contains(#""name":"Nursery""#) && json.contains(#""threshold":55"#))
        #expect(json.contains(#""monitoring":false"#))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: data.url.path)[.posixPermissions])
        #expect((mode as? NSNumber)?.intValue == 0o700)
    }

    @Test("listing an empty data directory creates nothing and says how to pair")
    func emptyListings() throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-app")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = CribCallDataDirectory(path: directory.appendingPathComponent("none").path)
        #expect(try ListenersCommands.list(in: data, json: true).isEmpty)
        #expect(
            try MonitorsCommands.list(in: data, json: false)
                == [PairedMonitors.table([], howToPair: MonitorsCommands.howToPair)])
        #expect(throws: ListenersCommands.unknown("abcd")) { try ListenersCommands.revoke("abcd", in: data) }
        #expect(!FileManager.default.fileExists(atPath: data.url.path))
    }

    @Test("noise detection reads PCM in any chunking, an odd byte waiting for the next chunk")
    func detection() throws {
        // 2 s of silence, 1.5 s of a loud square wave, 2 s of silence, at 16 kHz, as S16LE bytes.
        let loud = (0..<24_000).map { Int16($0 % 40 < 20 ? 20_000 : -20_000) }
        let samples = [Int16](repeating: 0, count: 32_000) + loud + [Int16](repeating: 0, count: 32_000)
        let bytes = Data(samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
        var whole = try NoiseDetectionRun(
            sampleRate: 16_000, threshold: 60, minDurationMs: 600, cooldownSeconds: 10, json: true)
        var chunked = whole
        let expected = whole.feed(bytes)
        var lines: [String] = []
        var offset = 0
        for size in [1, 333, 7, 4_001, 2] where offset < bytes.count {
            lines += chunked.feed(bytes[offset..<min(bytes.count, offset + size)])
            offset += size
        }
        lines += chunked.feed(bytes[offset...])
        #expect(expected.count == 1 && lines == expected)
        #expect(expected.first?.contains(#""event":"noise""#) == true)
        #expect(chunked.summary == whole.summary)
        #expect(throws: CommandFailure.self) {
            try NoiseDetectionRun(
                sampleRate: 44_100, threshold: 60, minDurationMs: 600, cooldownSeconds: 10, json: false)
        }
    }

    @Test("canonicalize: RFC 8785 bytes, and invalid JSON fails with status 2")
    func canonicalize() throws {
        #expect(
            try Canonicalizer.canonicalize(Data(#"{"b": 1.0, "a": [true]}"#.utf8)) == Array(#"{"a":[true],"b":1}"#.utf8)
        )
        let failure = #expect(throws: CommandFailure.self) {
            try Canonicalizer.canonicalize(Data(#"{"a":1,"a":2}"#.utf8))
        }
        #expect(failure?.kind == .failure(status: 2))
        #expect(failure?.message.hasPrefix("invalid JSON: ") == true)
    }

    @Test("install-service refuses monitor options for the listener and ports out of range")
    func installService() {
        var request = InstallServiceRequest(role: .listener)
        request.port = 48080
        let monitorOnly = CommandFailure.usage(
            "--audio-source, --port, --safety and --video-source are settings of the monitor service")
        #expect(throws: monitorOnly) { try request.validate() }
        request.port = nil
        request.safety = true
        #expect(throws: monitorOnly) { try request.validate() }
        request.safety = false
        request.web = 0
        #expect(throws: Never.self) { try request.validate() }
        request.web = nil
        request.role = .monitor
        request.port = 70_000
        #expect(throws: CommandFailure.usage("--port must be between 1 and 65535")) { try request.validate() }
        request.port = 48080
        #expect(throws: Never.self) { try request.validate() }
    }
}
