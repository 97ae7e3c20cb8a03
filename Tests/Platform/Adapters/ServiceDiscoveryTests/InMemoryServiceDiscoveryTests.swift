import Testing

@testable import ServiceDiscovery

/// The in-memory twin behaves like the real adapter: found, updated on rename, lost on cancel.
struct InMemoryServiceDiscoveryTests {
    static let advertisement = MonitorAdvertisement(
        monitorId: "monitor-1", monitorName: "Nursery", certFingerprint: String(repeating: "ab", count: 32), port: 48080
    )

    @Test("A browser sees found, then updated on rename, then lost on cancel")
    func lifecycle() async throws {
        let network = InMemoryServiceDiscovery(hosts: ["192.0.2.7"])
        var events = network.browse().makeAsyncIterator()
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
        var events = network.browse().makeAsyncIterator()
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
}

/// TXT records are encoded as PROTOCOL.md §10 says and parsed strictly.
struct MonitorTXTRecordTests {
    @Test("Encoding gives the five §10 keys, and parsing it back gives the same record")
    func roundTrip() throws {
        let record = MonitorTXTRecord(InMemoryServiceDiscoveryTests.advertisement)
        let bytes = try record.encoded()
        #expect(bytes.first == UInt8("monitorId=monitor-1".utf8.count))
        #expect(MonitorTXTRecord(parsing: bytes) == record)
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
        #expect(MonitorTXTRecord(parsing: bytes) == nil)
    }

    @Test("Keys are case-insensitive and the first occurrence wins")
    func firstKeyWins() throws {
        let fingerprint = String(repeating: "0f", count: 32)
        let record = try #require(
            MonitorTXTRecord(
                parsing: Self.txt([
                    "MONITORID=first", "monitorId=second", "monitorCertFingerprint=\(fingerprint)", "flag",
                ])))
        #expect(record.monitorId == "first")
        #expect(record.monitorName == nil)
        #expect(record.servicePort == nil)
    }
}

/// Instances under two service types and interfaces merge into one monitor.
struct DiscoveryMergerTests {
    @Test("found needs TXT, port and address; a second type updates; losing the last instance is lost")
    func merging() {
        var merger = DiscoveryMerger()
        let udp = DiscoveryMerger.InstanceKey(serviceType: "_baby-monitor._udp", name: "Nursery", interfaceIndex: 2)
        let tcp = DiscoveryMerger.InstanceKey(serviceType: "_baby-monitor._tcp", name: "Nursery", interfaceIndex: 2)
        let record = MonitorTXTRecord(InMemoryServiceDiscoveryTests.advertisement)
        #expect(
            merger.update(udp) {
                $0.record = record
                $0.port = 48080
            } == [])
        let events = merger.update(udp) { $0.addresses = ["10.0.0.1"] }
        #expect(events.count == 1)
        guard case .found(let monitor) = events.first else { return }
        #expect(monitor.serviceTypes == ["_baby-monitor._udp"])
        let second = merger.update(tcp) { $0 = .init(record: record, port: 48080, addresses: ["10.0.0.1"]) }
        #expect(second.count == 1)
        guard case .updated(let merged) = second.first else { return }
        #expect(merged.serviceTypes == ["_baby-monitor._udp", "_baby-monitor._tcp"])
        #expect(merger.remove(udp).count == 1)
        #expect(merger.remove(tcp) == [.lost(monitorId: "monitor-1")])
    }
}
