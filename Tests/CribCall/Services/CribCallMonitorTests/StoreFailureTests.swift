import CanonicalJSON
import ControlTransport
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import TestSupport
import Testing

/// The monitor's database refusing a write (a full disk, an I/O error; here a trigger another process adds with
/// sqlite3): the monitor says so and never answers as if the write had happened (issue 33: no swallowed store error).
@Suite("MonitorService: a database that refuses a write is said, never swallowed")
struct StoreFailureTests {
    let listener = try! DeviceIdentity.generate(now: Date())

    /// A monitor on a database file, and a way to make that file refuse writes as SQLite would.
    struct Rig {
        let directory: URL
        let harness: MonitorHarness

        init() throws {
            directory = try Subprocess.temporaryDirectory("monitor-store-failure")
            harness = try MonitorHarness(database: try CribCallDatabase(directory: directory))
        }

        /// Runs `sql` on the database file from another process (sqlite3), as a second program would.
        func sqlite(_ sql: String) async throws {
            let file = directory.appendingPathComponent(CribCallDatabase.fileName).path
            let result = try await Subprocess.run("sqlite3", [file, sql])
            #expect(result.status == 0, "\(result.stderrText)")
        }

        func storeFailures() -> [String] {
            harness.events.compactMap { if case .storeFailed(let what, _) = $0 { what } else { nil } }
        }

        func stop() async {
            await harness.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test("UNPAIR the database refuses: ERROR \"still paired\", the pairing kept, the failure said; later it works")
    func unpairRefused() async throws {
        let rig = try Rig()
        let connection = try await rig.harness.pairByPIN(listener, name: "Dad")
        let listenerId = listener.deviceId.uuidString.lowercased()
        try await rig.sqlite(
            "CREATE TRIGGER refuse BEFORE DELETE ON trustedListener BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;")
        try await connection.send(.unpair(Unpair(listenerId: listenerId)))
        var frames = connection.inbound.makeAsyncIterator()
        guard case .error(let error)? = try await connection.nextMessage(&frames) else {
            Issue.record("UNPAIR that did not happen must not be answered UNPAIRED")
            return
        }
        #expect(error.errorCode == .internalError && error.message.contains("still paired"), "\(error)")
        #expect(try rig.harness.database.trustedListeners().map(\.listenerId) == [listenerId])
        #expect(rig.storeFailures().contains { $0.contains("forget the listener") }, "\(rig.harness.events)")
        // Still trusted on the same connection, and the next UNPAIR (the disk fixed) goes through.
        try await connection.send(.ping(Ping(timestamp: 7)))
        #expect(try await connection.nextMessage(&frames) == .pong(Ping(timestamp: 7)))
        try await rig.sqlite("DROP TRIGGER refuse;")
        try await connection.send(.unpair(Unpair(listenerId: listenerId)))
        #expect(try await connection.nextMessage(&frames) == .unpaired(Unpaired(listenerId: listenerId)))
        #expect(try rig.harness.database.trustedListeners().isEmpty)
        await rig.stop()
    }

    @Test("the PIN failure count the database refuses to keep is said (a restart would forget it)")
    func pinCountRefused() async throws {
        let rig = try Rig()
        for event in ["INSERT", "UPDATE"] {
            try await rig.sqlite(
                """
                CREATE TRIGGER refuse_\(event) BEFORE \(event) ON setting WHEN NEW.key = 'pinPairingFailures'
                BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;
                """)
        }
        // A successful pairing writes the count back to 0: refused here.
        _ = try await rig.harness.pairByPIN(listener, name: "Dad")
        let said = await rig.harness.event { if case .storeFailed = $0 { true } else { false } }
        guard case .storeFailed(let what, let reason)? = said else {
            Issue.record("the refused write was swallowed: \(rig.harness.events)")
            return
        }
        #expect(what.contains("failed PIN pairings") && reason.contains("disk I/O error"), "\(what): \(reason)")
        #expect(
            said?.text(interactive: false, qrPNG: nil)?.hasPrefix(
                "⚠️  The monitor's database failed: it could not save the count") == true)
        #expect(said?.json["event"]?.stringValue == "store_failed")
        await rig.stop()
    }
}
