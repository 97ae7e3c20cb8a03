import ControlTransport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import TestSupport
import Testing

/// The listener's database refusing a write (a full disk; here a trigger another process adds with sqlite3): the
/// alerts still come through, and what the database lost is said once, not per alert (issue 33: no swallowed store
/// error; before, `try? database.recordReceived` said nothing and the next reconnection showed the alerts again).
@Suite("ListenerService: a database that refuses a write is said once; alerts still arrive")
struct ListenerStoreFailureTests {
    typealias Recorder = MonitorListenerTests.Recorder

    @Test("which alerts it had cannot be noted: every noise is shown, and the failure said once")
    func lastSeqRefused() async throws {
        let rig = try ReplayTests.Rig()
        let directory = try Subprocess.temporaryDirectory("listener-store-failure")
        defer { try? FileManager.default.removeItem(at: directory) }
        let identity = try DeviceIdentity.generate(now: Date())
        let listener = ListenerService(
            identity: identity, name: "Dad", database: try CribCallDatabase(directory: directory),
            connector: rig.network.connector(identity: PeerCertificate(identity: identity)))
        _ = try await listener.pairWithQR(qrText: await rig.monitor.showQR(port: 48080).qrText, host: "nursery")
        let file = directory.appendingPathComponent(CribCallDatabase.fileName).path
        let trigger = try await Subprocess.run(
            "sqlite3",
            [
                file,
                """
                CREATE TRIGGER refuse BEFORE UPDATE OF lastSeq ON trustedMonitor
                BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;
                """,
            ])
        #expect(trigger.status == 0, "\(trigger.stderrText)")

        let heard = Recorder<ListenerEvent>()
        let listening = Task { for await event in await listener.listen() { heard.append(event) } }
        #expect(await heard.wait { if case .connected = $0 { true } else { false } } != nil)
        try await rig.noise(2, at: Date())
        let second = await heard.wait { if case .noise(_, _, let event) = $0 { event.seq == 2 } else { false } }
        #expect(second != nil, "the alerts still arrive: \(heard.all)")
        let said = heard.all.compactMap {
            if case .storeFailed(let what, let reason) = $0 { (what, reason) } else { nil }
        }
        #expect(said.count == 1, "said once, not per alert: \(said)")
        #expect(said.first?.0.contains("note which alerts it has had") == true, "\(said)")
        #expect(said.first?.1.contains("disk I/O error") == true, "\(said)")
        let line = ListenerEvent.storeFailed(what: said.first?.0 ?? "", reason: "disk I/O error").text
        #expect(line.contains("alerts still come through"), "\(line)")
        listening.cancel()
        await listening.value
    }
}
