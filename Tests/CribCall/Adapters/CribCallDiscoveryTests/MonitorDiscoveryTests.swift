import CribCallProtocol
import ServiceDiscovery
import Testing

@testable import CribCallDiscovery

/// Monitors over the in-memory twin behave as over the real network: found, updated on rename, lost on cancel.
struct MonitorDiscoveryTests {
    static let advertisement = MonitorAdvertisement(
        monitorId: "monitor-1", monitorName: "Nursery", certFingerprint: String(repeating: "ab", count: 32), port: 48080
    )

    @Test("A browser sees found, then updated on rename, then lost on cancel")
    func lifecycle() async throws {
        let network = InMemoryServiceDiscovery(hosts: ["192.0.2.7"])
        var events = network.browseMonitors(lostGracePeriod: .zero).makeAsyncIterator()
        let handle = try await network.advertise(Self.advertisement)
        let expected = DiscoveredMonitor(
            monitorId: "monitor-1", monitorName: "Nursery", certFingerprint: Self.advertisement.certFingerprint,
            port: 48080, hosts: ["192.0.2.7"], serviceTypes: ["_baby-monitor._udp", "_baby-monitor._tcp"]
        )
        #expect(try await events.next() == .found(expected))

        var renamed = Self.advertisement
        renamed.monitorName = "Bedroom"
        try await handle.update(renamed)
        var expectedRenamed = expected
        expectedRenamed.monitorName = "Bedroom"
        #expect(try await events.next() == .updated(expectedRenamed))

        await handle.cancel()
        #expect(try await events.next() == .lost(monitorId: "monitor-1"))
    }

    @Test("A browser started later is told about existing advertisements")
    func replay() async throws {
        let network = InMemoryServiceDiscovery()
        _ = try await network.advertise(Self.advertisement)
        var events = network.browseMonitors().makeAsyncIterator()
        guard case .found(let monitor) = try await events.next() else {
            Issue.record("expected found")
            return
        }
        #expect(monitor.monitorId == "monitor-1")
        #expect(monitor.hosts == ["127.0.0.1"])
    }

    @Test("An advertisement whose TXT entry exceeds 255 bytes is refused")
    func oversizedName() async {
        var advertisement = Self.advertisement
        advertisement.monitorName = String(repeating: "n", count: 250)
        await #expect(throws: ServiceDiscoveryError.self) {
            _ = try await InMemoryServiceDiscovery().advertise(advertisement)
        }
    }

    @Test("A vanished monitor that comes back within the grace period is updated, never lost")
    func lostGrace() async throws {
        let network = InMemoryServiceDiscovery()
        var events = network.browseMonitors(lostGracePeriod: .seconds(30)).makeAsyncIterator()
        let handle = try await network.advertise(Self.advertisement)
        guard case .found = try await events.next() else {
            Issue.record("expected found")
            return
        }
        // Withdrawn, then announced again under a new name (a rename as the real network shows it).
        await handle.cancel()
        var renamed = Self.advertisement
        renamed.monitorName = "Bedroom"
        _ = try await network.advertise(renamed)
        guard case .updated(let monitor) = try await events.next() else {
            Issue.record("expected updated")
            return
        }
        #expect(monitor.monitorName == "Bedroom")
    }

    @Test("Without a daemon, the error also says how to do without discovery")
    func advice() {
        let error = ServiceDiscoveryError(code: .daemonNotRunning, message: "the Avahi daemon is not running")
        #expect(
            error.withMonitorAdvice.message.hasSuffix(
                "(or run without discovery: --no-discovery / --address HOST:PORT)"))
        let other = ServiceDiscoveryError(code: .browseFailed, message: "failed")
        #expect(other.withMonitorAdvice == other)
    }
}

/// TXT records are encoded as PROTOCOL.md §10 says and read strictly, from the wire bytes.
struct MonitorTXTRecordTests {
    /// What a browser reads from `bytes`.
    static func record(parsing bytes: [UInt8]) -> MonitorTXTRecord? {
        TXTRecord(parsing: bytes).flatMap { txt in MonitorTXTRecord { txt[$0] } }
    }

    @Test("Encoding gives the five §10 keys, and parsing it back gives the same record")
    func roundTrip() throws {
        let record = MonitorTXTRecord(MonitorDiscoveryTests.advertisement)
        let bytes = try ServiceAdvertisement(MonitorDiscoveryTests.advertisement).txt.encoded()
        #expect(bytes.first == UInt8("monitorId=monitor-1".utf8.count))
        #expect(Self.record(parsing: bytes) == record)
        #expect(
            record.entries.map(\.key) == [
                "monitorId", "monitorName", "monitorCertFingerprint", "version",
                "servicePort",
            ])
    }

    static func txt(_ entries: [String]) -> [UInt8] {
        entries.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    @Test(
        "Records without monitorId, with a malformed fingerprint or a truncated length are ignored",
        arguments: [
            txt(["monitorCertFingerprint=" + String(repeating: "ab", count: 32)]),
            txt(["monitorId=x", "monitorCertFingerprint=" + String(repeating: "AB", count: 32)]),
            txt(["monitorId=x", "monitorCertFingerprint=" + String(repeating: "ab", count: 31)]),
            txt(["monitorId=x", "monitorCertFingerprint=" + String(repeating: "gg", count: 32)]),
            txt(["monitorId=", "monitorCertFingerprint=" + String(repeating: "ab", count: 32)]),
            [40] + Array("monitorId=x".utf8),
        ])
    func rejects(bytes: [UInt8]) {
        #expect(Self.record(parsing: bytes) == nil)
    }

    @Test("Keys are case-insensitive and the first occurrence wins")
    func firstKeyWins() throws {
        let fingerprint = String(repeating: "0f", count: 32)
        let record = try #require(
            Self.record(
                parsing: Self.txt([
                    "MONITORID=first", "monitorId=second", "monitorCertFingerprint=\(fingerprint)", "flag",
                ])))
        #expect(record.monitorId == "first")
        #expect(record.monitorName == nil)
        #expect(record.servicePort == nil)
    }
}
