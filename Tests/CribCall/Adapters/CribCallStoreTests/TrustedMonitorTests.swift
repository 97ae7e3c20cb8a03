import CribCallProtocol
import CribCallStore
import Foundation
import Testing

@Suite("Trusted monitors (listener side)")
struct TrustedMonitorTests {
    private func monitor(_ id: String, byte: UInt8) -> TrustedMonitor {
        TrustedMonitor(monitorId: id, fingerprint: StoreFixtures.fingerprint(byte))
    }

    @Test("trusting stores name and address with lastSeq 0; forgetting removes it")
    func trustAndForget() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustMonitor(
            monitor("M1", byte: 1), name: "Nursery", host: "10.0.0.5", port: 48080, at: StoreFixtures.date(0)
        )
        try database.trustMonitor(
            monitor("M2", byte: 2), name: "Bedroom", host: nil, port: nil, at: StoreFixtures.date(1)
        )

        let monitors = try database.trustedMonitors()
        #expect(monitors.map(\.monitorId) == ["M1", "M2"])
        #expect(monitors[0].name == "Nursery")
        #expect(monitors[0].fingerprint == StoreFixtures.fingerprint(1))
        #expect(monitors[0].lastKnownHost == "10.0.0.5")
        #expect(monitors[0].lastKnownPort == 48080)
        #expect(monitors[0].lastSeq == 0)
        #expect(monitors[0].createdAt == StoreFixtures.date(0))
        #expect(monitors[1].lastKnownHost == nil)
        #expect(monitors[1].lastKnownPort == nil)

        #expect(try database.forgetMonitor(id: "M1"))
        #expect(try database.forgetMonitor(id: "M1") == false)
        #expect(try database.trustedMonitors().map(\.monitorId) == ["M2"])
    }

    @Test("address updates replace host and port, and can clear them")
    func addressUpdates() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustMonitor(
            monitor("M1", byte: 1), name: "Nursery", host: "10.0.0.5", port: 1, at: StoreFixtures.date(0)
        )
        try database.updateMonitorAddress(id: "M1", host: "10.0.0.9", port: 2)
        #expect(try database.trustedMonitors().first?.lastKnownHost == "10.0.0.9")
        #expect(try database.trustedMonitors().first?.lastKnownPort == 2)
        try database.updateMonitorAddress(id: "M1", host: nil, port: nil)
        #expect(try database.trustedMonitors().first?.lastKnownHost == nil)
        #expect(throws: CribCallStoreError.unknownMonitor(id: "nope")) {
            try database.updateMonitorAddress(id: "nope", host: "h", port: 1)
        }
    }

    @Test("lastSeq keeps the maximum received seq, per monitor")
    func lastSeqKeepsMaximum() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustMonitor(monitor("M1", byte: 1), name: "A", host: nil, port: nil, at: StoreFixtures.date(0))
        try database.trustMonitor(monitor("M2", byte: 2), name: "B", host: nil, port: nil, at: StoreFixtures.date(0))
        try database.recordReceived(seq: 7, from: "M1")
        try database.recordReceived(seq: 3, from: "M1")
        try database.recordReceived(seq: 12, from: "M1")
        try database.recordReceived(seq: 5, from: "M1")
        #expect(try database.lastSeq(monitorId: "M1") == 12)
        #expect(try database.lastSeq(monitorId: "M2") == 0)
        #expect(throws: CribCallStoreError.unknownMonitor(id: "M3")) { try database.lastSeq(monitorId: "M3") }
        #expect(throws: CribCallStoreError.unknownMonitor(id: "M3")) { try database.recordReceived(seq: 1, from: "M3") }
    }

    @Test("re-pairing replaces the row by id or by fingerprint and resets lastSeq")
    func repair() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustMonitor(monitor("M1", byte: 1), name: "Old", host: nil, port: nil, at: StoreFixtures.date(0))
        try database.recordReceived(seq: 40, from: "M1")
        try database.trustMonitor(monitor("M1", byte: 3), name: "New", host: "h", port: 9, at: StoreFixtures.date(1))
        #expect(try database.trustedMonitors().map(\.name) == ["New"])
        #expect(try database.lastSeq(monitorId: "M1") == 0)

        try database.trustMonitor(
            monitor("M9", byte: 3), name: "Renamed", host: nil, port: nil, at: StoreFixtures.date(2)
        )
        #expect(try database.trustedMonitors().map(\.monitorId) == ["M9"])
    }
}
