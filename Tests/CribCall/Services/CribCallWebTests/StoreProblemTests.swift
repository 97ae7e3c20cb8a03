import CanonicalJSON
import CribCallListener
import CribCallProtocol
import CribCallStore
import CribCallWeb
import DeviceIdentity
import Foundation
import TestSupport
import Testing

/// Both apps on a database file that fails (a full disk, an I/O error; here made so by another process with
/// sqlite3: a trigger that refuses a write, a table moved away): what was not done is never answered as done, a list
/// that cannot be read is not shown as empty, and the pages say what is wrong until it works again (issue 33).
@Suite("The apps on a failing database: said on the page, never answered as done")
struct StoreProblemTests {
    /// A database file in a fresh directory, and sqlite3 on it from another process.
    struct File {
        let directory: URL
        let database: CribCallDatabase

        init() throws {
            directory = try Subprocess.temporaryDirectory("web-store-problem")
            database = try CribCallDatabase(directory: directory)
        }

        func sqlite(_ sql: String) async throws {
            let file = directory.appendingPathComponent(CribCallDatabase.fileName).path
            let result = try await Subprocess.run("sqlite3", [file, sql])
            #expect(result.status == 0, "\(result.stderrText)")
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test(
        "the monitor's app: an unpair not saved is a 503 'still paired'; an unreadable log is a banner, not an empty list; the history a 503; clear again once it works"
    )
    func monitorApp() async throws {
        let file = try File()
        defer { file.remove() }
        let dad = TrustedListener(
            listenerId: "dad", name: "Dad", publicKey: "MCowBQYDK2VwAyEAdad",
            fingerprint: CertificateFingerprint(bytes: [UInt8](repeating: 7, count: 32))!)
        _ = try file.database.trustListener(dad, at: Date())
        let rig = try await WebRig(database: file.database, camera: false)
        #expect(try await rig.state()["storeProblem"] == .null)

        try await file.sqlite(
            "CREATE TRIGGER refuse BEFORE DELETE ON trustedListener BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;")
        let refused = try await rig.post("api/listeners/dad/revoke")
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.text.contains("still paired") && refused.text.contains("disk I/O error"), "\(refused.text)")
        #expect(try file.database.trustedListeners().map(\.listenerId) == ["dad"])

        try await file.sqlite("ALTER TABLE noiseEvent RENAME TO noiseEventAway;")
        let state = try await rig.state()
        let problem = try #require(state["storeProblem"]?.stringValue, "no storeProblem in \(state)")
        #expect(problem.contains("read its latest events") && problem.contains("Check that the disk"), "\(problem)")
        #expect(problem.contains("no such table") && !problem.contains("SELECT"), "SQLite's words, not the SQL")
        #expect(state["listeners"]?.arrayValue?.count == 1, "what still reads is shown: \(state)")
        let history = try await rig.get("api/history?range=tonight")
        #expect(history.status == 503 && history.text.contains("read the history"), "\(history.text)")
        #expect(try await rig.get("api/history?range=someday").status == 400, "a bad range is still the caller's")

        try await file.sqlite("ALTER TABLE noiseEventAway RENAME TO noiseEvent; DROP TRIGGER refuse;")
        #expect(try await rig.state()["storeProblem"] == .null, "said until it works again, no longer")
        #expect(try await rig.get("api/history?range=tonight").status == 200)
        #expect(try await rig.post("api/listeners/dad/revoke").status == 200)
        #expect(try file.database.trustedListeners().isEmpty)
        await rig.stop()
    }

    @Test(
        "the parents' app: an alert it cannot save is shown all the same and the page says the history misses it; forget is a 503 while the pairings cannot be read"
    )
    func listenerApp() async throws {
        let file = try File()
        defer { file.remove() }
        let rig = try await WebRig(camera: false)
        let parent = try await ListenerWebAppTests.Parent(rig, database: file.database)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func noise(_ seq: Int64) async {
            await parent.app.observe(
                .noise(
                    monitorId: "m1", monitorName: "Nursery",
                    event: NoiseEvent(monitorId: "m1", timestamp: now, peakLevel: 72, seq: seq, eventId: "e\(seq)")))
        }

        try await file.sqlite(
            "CREATE TRIGGER refuse BEFORE INSERT ON receivedEvent BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
        )
        await noise(1)
        let state = try await parent.state()
        let problem = try #require(state["storeProblem"]?.stringValue, "no storeProblem in \(state)")
        #expect(problem.contains("save a heard alert in the history") && problem.contains("disk is full"), "\(problem)")
        #expect(
            state["alerts"]?.arrayValue?.contains { $0["kind"]?.stringValue == "noise" } == true,
            "the alert is shown all the same: \(state)")

        try await file.sqlite("ALTER TABLE trustedMonitor RENAME TO trustedMonitorAway;")
        let forget = try await parent.post("api/monitors/m1/forget")
        #expect(forget.status == 503 && forget.text.contains("nothing was forgotten"), "\(forget.text)")

        try await file.sqlite("ALTER TABLE trustedMonitorAway RENAME TO trustedMonitor; DROP TRIGGER refuse;")
        await noise(2)
        #expect(try await parent.state()["storeProblem"] == .null, "said until it works again, no longer")
        #expect(try await parent.post("api/monitors/m1/forget").status == 404, "no such monitor, as before")
        await parent.stop()
        await rig.stop()
    }
}
