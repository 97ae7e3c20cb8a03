import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import Testing

@Suite("Trusted listeners (monitor side)")
struct TrustedListenerTests {
    @Test("trusting stores every field and revoking removes only that listener")
    func trustAndRevoke() throws {
        let database = try CribCallDatabase.inMemory()
        let mum = StoreFixtures.listener("L1", name: "Mum's phone", byte: 1)
        try database.trustListener(mum, at: StoreFixtures.date(0))
        try database.trustListener(StoreFixtures.listener("L2", byte: 2), at: StoreFixtures.date(1))

        let listeners = try database.trustedListeners()
        #expect(listeners.map(\.listenerId) == ["L1", "L2"])
        #expect(listeners[0].name == "Mum's phone")
        #expect(listeners[0].publicKey == "MCowBQYDK2VwAyEAL1")
        #expect(listeners[0].fingerprint == StoreFixtures.fingerprint(1))
        #expect(listeners[0].createdAt == StoreFixtures.date(0))

        #expect(try database.revokeListener(id: "L1"))
        #expect(try database.revokeListener(id: "L1") == false)
        #expect(try database.trustedListeners().map(\.listenerId) == ["L2"])
        #expect(try database.trustedListener(fingerprint: StoreFixtures.fingerprint(1)) == nil)
    }

    @Test("lookup by fingerprint finds the listener that presented that certificate")
    func lookupByFingerprint() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustListener(StoreFixtures.listener("L1", byte: 1), at: StoreFixtures.date(0))
        try database.trustListener(StoreFixtures.listener("L2", byte: 2), at: StoreFixtures.date(0))
        #expect(try database.trustedListener(fingerprint: StoreFixtures.fingerprint(2))?.listenerId == "L2")
        #expect(try database.trustedListener(fingerprint: StoreFixtures.fingerprint(3)) == nil)
    }

    @Test("re-pairing with the same certificate replaces the row (new name and date); another certificate is refused")
    func repairSameId() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustListener(StoreFixtures.listener("L1", name: "Old", byte: 1), at: StoreFixtures.date(0))
        try database.trustListener(StoreFixtures.listener("L1", name: "New", byte: 1), at: StoreFixtures.date(5))
        // The id stays with the certificate that paired it: another device cannot take its place.
        #expect(throws: CribCallStoreError.listenerIdTaken("L1")) {
            try database.trustListener(StoreFixtures.listener("L1", name: "Other", byte: 9), at: StoreFixtures.date(6))
        }

        let listeners = try database.trustedListeners()
        #expect(listeners.count == 1)
        #expect(listeners.first?.name == "New")
        #expect(listeners.first?.fingerprint == StoreFixtures.fingerprint(1))
        #expect(listeners.first?.createdAt == StoreFixtures.date(5))
        #expect(try database.trustedListener(fingerprint: StoreFixtures.fingerprint(9)) == nil)
    }

    @Test("a new listenerId with an already-trusted fingerprint replaces the old row (fingerprints stay unique)")
    func fingerprintUniqueness() throws {
        let database = try CribCallDatabase.inMemory()
        try database.trustListener(StoreFixtures.listener("L1", byte: 1), at: StoreFixtures.date(0))
        try database.trustListener(StoreFixtures.listener("L2", byte: 2), at: StoreFixtures.date(0))
        try database.trustListener(StoreFixtures.listener("L3", byte: 1), at: StoreFixtures.date(1))

        #expect(try database.trustedListeners().map(\.listenerId).sorted() == ["L2", "L3"])
        #expect(try database.trustedListener(fingerprint: StoreFixtures.fingerprint(1))?.listenerId == "L3")
    }

    @Test("fingerprints are stored as 64 lowercase hex characters")
    func fingerprintColumnIsHex() async throws {
        try await StoreFixtures.withDirectory { directory in
            let database = try CribCallDatabase(directory: directory)
            var bytes = [UInt8](repeating: 0xAB, count: 32)
            bytes[0] = 0x0F
            let listener = TrustedListener(
                listenerId: "L1", name: "n", publicKey: "k", fingerprint: CertificateFingerprint(bytes: bytes)!
            )
            try database.trustListener(listener, at: StoreFixtures.date(0))
            let file = directory.appendingPathComponent(CribCallDatabase.fileName).path
            let result = try await TestSQLite.query(file, "SELECT fingerprint FROM trustedListener")
            #expect(result == "0f" + String(repeating: "ab", count: 31))
        }
    }
}
