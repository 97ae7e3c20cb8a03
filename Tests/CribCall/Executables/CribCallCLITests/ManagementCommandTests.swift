import CanonicalJSON
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import TestSupport
import Testing

/// `cribcall listeners`, `cribcall settings` and `cribcall pairing`, run as the built executable against a data
/// directory seeded through ``CribCallDatabase``.
@Suite("cribcall listeners / settings / pairing")
struct ManagementCommandTests {
    func cribcall(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), arguments)
    }

    static func fingerprint(_ byte: UInt8) -> CertificateFingerprint {
        CertificateFingerprint(bytes: [UInt8](repeating: byte, count: 32))!
    }

    static func date(_ seconds: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(1_700_000_000 + seconds))
    }

    /// Runs `body` with a fresh data directory (0700) holding a database with three listeners: two whose ids share
    /// the prefix `abcd`, and one that does not.
    func withSeededDirectory(_ body: (URL, CribCallDatabase) async throws -> Void) async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        let database = try CribCallDatabase(directory: directory)
        let seeds = [("abcd1111", "Kitchen phone", 1), ("abcd2222", "Tablet", 2), ("ef012345", "Laptop", 3)]
        for (index, (id, name, byte)) in seeds.enumerated() {
            let listener = TrustedListener(
                listenerId: id, name: name, publicKey: "MCowBQYDK2VwAyEA\(id)",
                fingerprint: Self.fingerprint(UInt8(byte)))
            try database.trustListener(listener, at: Self.date(index))
        }
        try await body(directory, database)
    }

    // MARK: listeners

    @Test("listeners list: a table with short fingerprints, and JSON lines with the full ones")
    func listListeners() async throws {
        try await withSeededDirectory { directory, _ in
            let text = try await cribcall(["listeners", "list", "--data-dir", directory.path])
            #expect(text.status == 0, "stderr: \(text.stderrText)")
            let lines = text.stdoutText.split(separator: "\n")
            #expect(lines.count == 4)
            #expect(lines.first?.contains("NAME") == true)
            for (id, name) in [("abcd1111", "Kitchen phone"), ("abcd2222", "Tablet"), ("ef012345", "Laptop")] {
                #expect(lines.contains { $0.contains(id) && $0.contains(name) })
            }
            let full = Self.fingerprint(1).hex
            #expect(text.stdoutText.contains(String(full.prefix(16))))
            #expect(!text.stdoutText.contains(full))
            #expect(text.stdoutText.contains("2023-11-14T22:13:20"))

            let json = try await cribcall(["listeners", "list", "--data-dir", directory.path, "--json"])
            #expect(json.status == 0, "stderr: \(json.stderrText)")
            let objects = try json.stdoutText.split(separator: "\n").map { try JSONParser().parse(Array($0.utf8)) }
            #expect(objects.count == 3)
            #expect(objects.allSatisfy { $0["event"] == "listener" })
            #expect(objects.map { $0["listenerId"]?.stringValue } == ["abcd1111", "abcd2222", "ef012345"])
            #expect(objects[0]["name"] == "Kitchen phone")
            #expect(objects[0]["certFingerprint"] == .string(full))
            let createdAt = try #require(objects[2]["createdAt"]?.stringValue)
            let parsed = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(createdAt)
            #expect(parsed == Self.date(2))
        }
    }

    @Test("listeners list with nothing paired says how to pair, and --json prints nothing")
    func listEmpty() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try CribCallDatabase(directory: directory)
        let text = try await cribcall(["listeners", "list", "--data-dir", directory.path])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("No listeners are paired yet"))
        #expect(text.stdoutText.contains("cribcall monitor"))
        let json = try await cribcall(["listeners", "list", "--data-dir", directory.path, "--json"])
        #expect(json.status == 0)
        #expect(json.stdout.isEmpty)
    }

    @Test("listeners revoke by full id and by unique prefix removes exactly that listener")
    func revoke() async throws {
        try await withSeededDirectory { directory, database in
            let full = try await cribcall(["listeners", "revoke", "abcd2222", "--data-dir", directory.path])
            #expect(full.status == 0, "stderr: \(full.stderrText)")
            #expect(full.stdoutText.contains("Revoked Tablet (abcd2222)."))
            #expect(full.stdoutText.contains("within a second"))
            #expect(try database.trustedListeners().map(\.listenerId) == ["abcd1111", "ef012345"])

            // With abcd2222 gone, "abcd" is now a unique prefix.
            let prefix = try await cribcall(["listeners", "revoke", "abcd", "--data-dir", directory.path])
            #expect(prefix.status == 0, "stderr: \(prefix.stderrText)")
            #expect(prefix.stdoutText.contains("Revoked Kitchen phone (abcd1111)."))
            #expect(try database.trustedListeners().map(\.listenerId) == ["ef012345"])
        }
    }

    @Test("listeners revoke refuses unknown ids, too-short prefixes and ambiguous prefixes, changing nothing")
    func revokeRefusals() async throws {
        try await withSeededDirectory { directory, database in
            let unknown = try await cribcall(["listeners", "revoke", "zzzz9999", "--data-dir", directory.path])
            #expect(unknown.status == 1)
            #expect(unknown.stdout.isEmpty)
            #expect(unknown.stderrText.contains("no paired listener has id zzzz9999; see `cribcall listeners list`"))

            let short = try await cribcall(["listeners", "revoke", "ef0", "--data-dir", directory.path])
            #expect(short.status == 1)
            #expect(short.stderrText.contains("no paired listener has id ef0"))

            let ambiguous = try await cribcall(["listeners", "revoke", "abcd", "--data-dir", directory.path])
            #expect(ambiguous.status == 1)
            #expect(ambiguous.stdout.isEmpty)
            #expect(ambiguous.stderrText.contains("abcd1111"))
            #expect(ambiguous.stderrText.contains("abcd2222"))
            #expect(!ambiguous.stderrText.contains("ef012345"))

            #expect(try database.trustedListeners().count == 3)
        }
    }

    // MARK: settings

    @Test("settings show prints the defaults, then what settings set stored")
    func showAndSet() async throws {
        try await withSeededDirectory { directory, database in
            let shown = try await cribcall(["settings", "show", "--data-dir", directory.path, "--json"])
            #expect(shown.status == 0, "stderr: \(shown.stderrText)")
            let defaults = try JSONParser().parse(shown.stdout)
            #expect(defaults["event"] == "settings")
            #expect(defaults["name"] == .string(MonitorSettings.defaults.monitorName))
            #expect(defaults["threshold"] == .number(Double(MonitorSettings.defaults.threshold)))
            #expect(defaults["autoStream"] == "none")

            let set = try await cribcall([
                "settings", "set", "name=Nursery", "threshold=55", "minDurationMs=800", "cooldownSec=30",
                "autoStream=audio_video", "autoStreamSec=60", "--data-dir", directory.path,
            ])
            #expect(set.status == 0, "stderr: \(set.stderrText)")
            #expect(set.stdoutText.contains("Nursery"))
            #expect(set.stdoutText.contains("audio_video"))
            let expected = MonitorSettings(
                monitorName: "Nursery", threshold: 55, minDurationMs: 800, cooldownSec: 30, autoStream: .audioVideo,
                autoStreamSec: 60)
            #expect(try database.monitorSettings() == expected)

            let text = try await cribcall(["settings", "show", "--data-dir", directory.path])
            #expect(text.status == 0)
            for line in ["name:", "Nursery", "threshold:", "55", "autoStreamSec:", "60"] {
                #expect(text.stdoutText.contains(line))
            }
            let shownJSON = try await cribcall(["settings", "show", "--data-dir", directory.path, "--json"])
            let json = try JSONParser().parse(shownJSON.stdout)
            #expect(json["minDurationMs"] == 800)
            #expect(json["autoStream"] == "audio_video")
        }
    }

    @Test("settings set with an unknown key, a bad value or an out-of-range value writes nothing")
    func setRefusals() async throws {
        try await withSeededDirectory { directory, database in
            try database.updateMonitorSettings { $0.threshold = 42 }
            let before = try database.monitorSettings()

            let badKey = try await cribcall(
                ["settings", "set", "threshold=50", "volume=3", "--data-dir", directory.path]
            )
            #expect(badKey.status != 0)
            #expect(badKey.stderrText.contains("volume"))
            #expect(
                badKey.stderrText.contains("name, threshold, minDurationMs, cooldownSec, autoStream, autoStreamSec"))

            let badMode = try await cribcall(["settings", "set", "autoStream=loud", "--data-dir", directory.path])
            #expect(badMode.status != 0)
            #expect(badMode.stderrText.contains("none, audio, audio_video"))

            let notNumber = try await cribcall(["settings", "set", "threshold=high", "--data-dir", directory.path])
            #expect(notNumber.status != 0)
            #expect(notNumber.stderrText.contains("threshold"))

            // threshold=50 is valid but must not be written, because autoStreamSec=2 is out of range.
            let range = try await cribcall(
                ["settings", "set", "threshold=50", "autoStreamSec=2", "--data-dir", directory.path]
            )
            #expect(range.status == 1)
            #expect(range.stdout.isEmpty)
            #expect(range.stderrText.contains("autoStreamSec must be in 5...600 s (got 2)"))

            #expect(try database.monitorSettings() == before)
        }
    }

    // MARK: pairing

    @Test("pairing unlock resets the counter and says whether PIN pairing was locked")
    func unlock() async throws {
        try await withSeededDirectory { directory, database in
            try database.setPinPairingFailures(PINPairingMonitor.lockThreshold)
            let locked = try await cribcall(["pairing", "unlock", "--data-dir", directory.path])
            #expect(locked.status == 0, "stderr: \(locked.stderrText)")
            #expect(locked.stdoutText.contains("was locked"))
            #expect(try database.pinPairingFailures() == 0)

            try database.setPinPairingFailures(3)
            let open = try await cribcall(["pairing", "unlock", "--data-dir", directory.path])
            #expect(open.status == 0)
            #expect(open.stdoutText.contains("was not locked"))
            #expect(try database.pinPairingFailures() == 0)
        }
    }

    // MARK: missing data directory

    @Test("read-only commands on a missing data directory print the empty state and create nothing")
    func missingDirectoryReadOnly() async throws {
        let parent = try Subprocess.temporaryDirectory("cribcall-cli")
        defer { try? FileManager.default.removeItem(at: parent) }
        let missing = parent.appendingPathComponent("data")

        let list = try await cribcall(["listeners", "list", "--data-dir", missing.path])
        #expect(list.status == 0, "stderr: \(list.stderrText)")
        #expect(list.stdoutText.contains("No listeners are paired yet"))
        let show = try await cribcall(["settings", "show", "--data-dir", missing.path, "--json"])
        #expect(show.status == 0)
        #expect(try JSONParser().parse(show.stdout)["name"] == .string(MonitorSettings.defaults.monitorName))
        let revoke = try await cribcall(["listeners", "revoke", "abcd1111", "--data-dir", missing.path])
        #expect(revoke.status == 1)
        #expect(revoke.stderrText.contains("no paired listener has id abcd1111"))

        #expect(!FileManager.default.fileExists(atPath: missing.path))

        // An existing but empty directory stays empty too.
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: false)
        #expect(try await cribcall(["listeners", "list", "--data-dir", missing.path, "--json"]).status == 0)
        #expect(try await cribcall(["settings", "show", "--data-dir", missing.path]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: missing.path).isEmpty)
    }

    @Test("writing commands create the data directory (0700) and the database")
    func missingDirectoryWrites() async throws {
        let parent = try Subprocess.temporaryDirectory("cribcall-cli")
        defer { try? FileManager.default.removeItem(at: parent) }
        let missing = parent.appendingPathComponent("data")

        let unlock = try await cribcall(["pairing", "unlock", "--data-dir", missing.path])
        #expect(unlock.status == 0, "stderr: \(unlock.stderrText)")
        #expect(unlock.stdoutText.contains("was not locked"))
        let attributes = try FileManager.default.attributesOfItem(atPath: missing.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(FileManager.default.fileExists(atPath: missing.appendingPathComponent(CribCallDatabase.fileName).path))

        let other = parent.appendingPathComponent("other")
        let set = try await cribcall(["settings", "set", "threshold=70", "--data-dir", other.path])
        #expect(set.status == 0, "stderr: \(set.stderrText)")
        #expect(try CribCallDatabase(directory: other).monitorSettings().threshold == 70)

        // An invalid value is refused before anything is created.
        let third = parent.appendingPathComponent("third")
        let refused = try await cribcall(["settings", "set", "cooldownSec=-1", "--data-dir", third.path])
        #expect(refused.status == 1)
        #expect(refused.stderrText.contains("cooldownSec must be in"))
        #expect(!FileManager.default.fileExists(atPath: third.path))
    }
}
