import ArgusAPI
import ArgusClient
import ArgusClientTransport
import ArgusHub
import ArgusTestSupport
import Foundation
import Synchronization
import TestSupport
import Testing

/// The app's side against a real hub: pairing, the token refreshed a minute before it expires (and the rotated
/// refresh token saved at once), a refused code, a revoked device.
@Suite("ArgusSession against the hub")
struct ArgusSessionTests {
    @Test("pair, call, refresh before expiry with the new refresh token saved; revoked: pair again")
    func lifecycle() async throws {
        let hub = try await HubFixture()
        let config = try Subprocess.temporaryDirectory("argus-session")
        defer { try? FileManager.default.removeItem(at: config) }
        let store = FileSessionStore(directory: config)
        let transport = try await PinnedTransport.connect(
            to: URL(string: hub.url)!, fingerprint: String(repeating: "0", count: 64))
        let wrong = await #expect(throws: ArgusClientError.self) {
            try await ArgusSession.pair(
                code: "000000", deviceName: "Laptop", deviceId: "laptop-1", hub: URL(string: hub.url)!,
                fingerprint: "", transport: transport.transport, store: store)
        }
        #expect(wrong == .pairingRefused("Invalid pairing code"))

        let offset = Mutex<TimeInterval>(0)
        let clock: @Sendable () -> Date = { Date().addingTimeInterval(offset.withLock { $0 }) }
        let code = try await hub.pairingCode()
        let session = try await ArgusSession.pair(
            code: code, deviceName: "Laptop", deviceId: "laptop-1", hub: URL(string: hub.url)!, fingerprint: "",
            transport: transport.transport, store: store, now: clock)
        let first = try #require(try store.load())
        #expect(try await session.events().total == 0)
        #expect(try store.load() == first, "no refresh while the token is fresh")
        let mode = try FileManager.default.attributesOfItem(atPath: store.file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // 59 minutes later the token has a minute left: refreshed before the call, the new refresh token saved
        offset.withLock { $0 = 59 * 60 }
        #expect(try await session.cameras().isEmpty)
        let second = try #require(try store.load())
        #expect(second.refreshToken != first.refreshToken && second.accessToken != first.accessToken)

        // a session resumed from the file works the same
        let resumed = try #require(try ArgusSession.resume(transport: transport.transport, store: store, now: clock))
        #expect(try await resumed.recent().isEmpty)

        try HubAdmin(dataDirectory: hub.directory).revoke("laptop-1")
        let revoked = await #expect(throws: ArgusClientError.self) { try await session.events() }
        if case .unauthorized = revoked {
        } else {
            Issue.record("expected unauthorized, got \(String(describing: revoked))")
        }
        await transport.shutdown()
        await hub.stop()
    }
}
