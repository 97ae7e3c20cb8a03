import ServiceDiscovery
import Testing

/// The in-memory twin behaves like the real adapter: each browser sees the instances of its types, after every
/// change, one step per call.
struct InMemoryServiceDiscoveryTests {
    static let types = ["_homeapps-test._udp", "_homeapps-test._tcp"]
    static let advertisement = ServiceAdvertisement(
        name: "Front Door", types: types, port: 4242, txt: ["path": "/ws", "version": "1"])

    static func instances(_ advertisement: ServiceAdvertisement, hosts: [String]) -> [ServiceInstance] {
        advertisement.types.sorted().map { type in
            ServiceInstance(
                id: .init(type: type, name: advertisement.name, interfaceIndex: 0), port: advertisement.port,
                txt: advertisement.txt, addresses: hosts)
        }
    }

    @Test("A browser sees every type, then a TXT update, then a rename in one step, then nothing after cancel")
    func lifecycle() async throws {
        let network = InMemoryServiceDiscovery(hosts: ["192.0.2.7", "192.0.2.1"])
        var views = network.browse(Self.types).makeAsyncIterator()
        let hosts = ["192.0.2.1", "192.0.2.7"]
        let handle = try await network.advertise(Self.advertisement)
        #expect(try await views.next() == Self.instances(Self.advertisement, hosts: hosts))

        var changed = Self.advertisement
        changed.txt = ["path": "/ws", "version": "2"]
        try await handle.update(changed)
        #expect(try await views.next() == Self.instances(changed, hosts: hosts))

        changed.name = "Back Door"
        try await handle.update(changed)
        #expect(try await views.next() == Self.instances(changed, hosts: hosts))

        await handle.cancel()
        #expect(try await views.next() == [])
        await handle.cancel()  // idempotent
        try await handle.update(Self.advertisement)  // a cancelled advertisement stays withdrawn
        _ = try await network.advertise(ServiceAdvertisement(name: "Other", types: [Self.types[0]], port: 1))
        #expect(try await views.next()?.map(\.id.name) == ["Other"])
    }

    @Test("A browser started later is told what exists, and only about the types it browses")
    func replayAndTypes() async throws {
        let network = InMemoryServiceDiscovery()
        _ = try await network.advertise(Self.advertisement)
        _ = try await network.advertise(ServiceAdvertisement(name: "Printer", types: ["_ipp._tcp"], port: 631))
        var views = network.browse(["_ipp._tcp"]).makeAsyncIterator()
        let instances = try #require(try await views.next())
        #expect(instances.map(\.id) == [.init(type: "_ipp._tcp", name: "Printer", interfaceIndex: 0)])
        #expect(instances.first?.addresses == ["127.0.0.1"] && instances.first?.txt == TXTRecord())
    }

    @Test(
        "Advertisements DNS-SD cannot publish are refused, saying what to change",
        arguments: [
            ServiceAdvertisement(name: "A", types: ["_x._tcp"], port: 0),
            ServiceAdvertisement(name: "A", types: ["_x._tcp"], port: 65_536),
            ServiceAdvertisement(name: "", types: ["_x._tcp"], port: 1),
            ServiceAdvertisement(name: String(repeating: "é", count: 32), types: ["_x._tcp"], port: 1),
            ServiceAdvertisement(name: "A", types: [], port: 1),
            ServiceAdvertisement(name: "A", types: ["_x._tcp", "_x._tcp"], port: 1),
            ServiceAdvertisement(
                name: "A", types: ["_x._tcp"], port: 1, txt: ["k": String(repeating: "v", count: 254)]),
        ])
    func invalid(advertisement: ServiceAdvertisement) async {
        let error = await #expect(throws: ServiceDiscoveryError.self) {
            _ = try await InMemoryServiceDiscovery().advertise(advertisement)
        }
        #expect(error?.code == .invalidAdvertisement)
        #expect(error?.message.contains(":") == true, "\(String(describing: error))")
    }
}
