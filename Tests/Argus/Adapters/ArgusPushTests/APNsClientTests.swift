import ArgusPush
import ArgusTestSupport
import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

/// The APNs client against the local stand-in: the provider token is reused, and remade once it is 50 minutes old.
@Suite("APNs client")
struct APNsClientTests {
    @Test("one provider token for 50 minutes, then a new one; 410 and bad tokens are told apart")
    func providerToken() async throws {
        guard let python = InteropPeers.python else {
            Issue.record("the Python venv is missing: run `make test`")
            return
        }
        let gone = String(repeating: "c3", count: 32)
        let apns = try await APNsStandIn.start(python: python, unregistered: [gone])
        // the clock starts 55 minutes in the past, so that the first token is 55 minutes old "now" (Apple and the
        // stand-in take up to 60) and the client's 50-minute rule shows when the clock is moved to the present
        let offset = Mutex<TimeInterval>(-55 * 60)
        let client = try await APNsClient(apns.configuration, logger: Logger(label: "apns-test")) {
            Date().addingTimeInterval(offset.withLock { $0 })
        }
        let note = PushNotification(title: "Garden", body: "Motion near the left edge", data: ["event_id": "e1"])
        let phone = String(repeating: "a1", count: 32)
        for _ in 0..<2 {
            guard case .delivered = await client.send(note, to: phone) else {
                Issue.record("not delivered: \(apns.pushes)")
                return
            }
        }
        offset.withLock { $0 = 0 }
        guard case .delivered = await client.send(note, to: phone) else {
            Issue.record("not delivered after the clock moved: \(apns.pushes)")
            return
        }
        #expect(await client.send(note, to: gone) == .unregistered)
        #expect(await client.send(note, to: "not-hex") == .badDeviceToken)
        let serials = apns.pushes.filter { $0["token"] as? String == phone }.compactMap { $0["token_serial"] as? Int }
        #expect(serials == [1, 1, 2], "\(apns.pushes)")
        await client.shutdown()
        await apns.stop()
    }
}
