import CribCallProtocol
import Testing

/// Instances under two service types and interfaces merge into one monitor (PROTOCOL.md §10).
struct DiscoveryMergerTests {
    static let record = MonitorTXTRecord(
        MonitorAdvertisement(
            monitorId: "monitor-1", monitorName: "Nursery", certFingerprint: String(repeating: "ab", count: 32),
            port: 48080))

    static func instance(
        _ serviceType: String, _ name: String = "Nursery", record: MonitorTXTRecord? = record, port: Int = 48080,
        addresses: [String] = ["10.0.0.1"]
    ) -> DiscoveryMerger.Instance {
        .init(
            serviceType: serviceType, name: name, interfaceIndex: 2, record: record, port: port, addresses: addresses)
    }

    @Test("found needs TXT, port and address; a second type updates; losing the last instance is lost")
    func merging() {
        var merger = DiscoveryMerger()
        let udp = Self.instance("_baby-monitor._udp")
        let tcp = Self.instance("_baby-monitor._tcp")
        #expect(merger.update([Self.instance("_baby-monitor._udp", addresses: [])]) == [])
        let events = merger.update([udp])
        #expect(events.count == 1)
        guard case .found(let monitor) = events.first else { return }
        #expect(monitor.serviceTypes == ["_baby-monitor._udp"])
        let second = merger.update([udp, tcp])
        #expect(second.count == 1)
        guard case .updated(let merged) = second.first else { return }
        #expect(merged.serviceTypes == ["_baby-monitor._udp", "_baby-monitor._tcp"])
        #expect(merger.update([tcp]).count == 1)
        #expect(merger.update([]) == [.lost(monitorId: "monitor-1")])
    }

    @Test("a stranger announcing the monitor's id with another fingerprint is a monitor of its own, never merged in")
    func strangerWithTheSameId() {
        var merger = DiscoveryMerger()
        let stranger = MonitorTXTRecord(
            MonitorAdvertisement(
                monitorId: "monitor-1", monitorName: "A Nursery", certFingerprint: String(repeating: "00", count: 32),
                port: 5000))
        // Named to sort first: merged by id alone, its port and fingerprint would hide the real monitor's.
        let events = merger.update([
            Self.instance("_baby-monitor._udp", "A Nursery", record: stranger, port: 5000, addresses: ["10.0.0.66"]),
            Self.instance("_baby-monitor._udp"),
        ])
        let found = events.compactMap { event -> DiscoveredMonitor? in
            if case .found(let monitor) = event { return monitor }
            return nil
        }
        #expect(found.count == 2, "\(events)")
        let real = found.first { $0.certFingerprint == String(repeating: "ab", count: 32) }
        #expect(real?.port == 48080 && real?.hosts == ["10.0.0.1"], "\(found)")
    }

    @Test("an instance whose TXT is not a monitor's is no monitor")
    func strayService() {
        var merger = DiscoveryMerger()
        #expect(merger.update([Self.instance("_baby-monitor._udp", "Printer", record: nil, port: 631)]) == [])
    }

    @Test("name and port come from the TXT record, else from the instance name and the SRV port")
    func fallbacks() {
        var merger = DiscoveryMerger()
        var record = Self.record
        record.monitorName = nil
        record.servicePort = nil
        let events = merger.update([Self.instance("_baby-monitor._tcp", "Attic", record: record, port: 4433)])
        guard case .found(let monitor) = events.first else {
            Issue.record("expected found, got \(events)")
            return
        }
        #expect(monitor.monitorName == "Attic" && monitor.port == 4433)
    }
}
