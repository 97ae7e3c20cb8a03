import ControlTransport
import CribCallProtocol
import DeviceIdentity
import NIOCore
import Testing

/// The in-memory twin keeps the promises of `ControlConnection`, `ControlListener` and `ControlConnector`, so that
/// services tested on it behave the same on QUIC.
@Suite("The in-memory transport behaves like a control connection")
struct InMemoryControlTransportTests {
    @Test("each end's peer is the other end's certificate")
    func peersAreCrossed() throws {
        let clientCertificate = try TestFrames.certificate()
        let serverCertificate = try TestFrames.certificate()
        let (client, server) = InMemoryControlTransport.pair(client: clientCertificate, server: serverCertificate)
        #expect(client.peer == serverCertificate)
        #expect(server.peer == clientCertificate)
        #expect(clientCertificate.fingerprint != serverCertificate.fingerprint)
    }

    @Test("a PeerCertificate built from an identity carries its fingerprint, key and certificate")
    func peerCertificateFromIdentity() throws {
        let identity = try DeviceIdentity.generate(now: TestFrames.now)
        let certificate = PeerCertificate(identity: identity)
        #expect(certificate.fingerprint == identity.fingerprint)
        #expect(certificate.fingerprint == CertificateFingerprint(certificateDER: certificate.certificateDER))
        #expect(certificate.publicKeySPKI == identity.publicKeySPKI)
        #expect(certificate.certificateDER == identity.certificateDER)
    }

    @Test("frames sent before a close are received, in order, before the close is observed")
    func framesThenClose() async throws {
        let (client, server) = try Self.pair()
        try await client.send([1])
        try await client.send(ControlMessage.ping(Ping(timestamp: 5)))
        try await client.send([3, 3])
        await client.close(code: 2)

        #expect(await server.closed() == .peerApplication(code: 2, reason: ""))
        let received = try await TestFrames.drain(server.inbound)
        #expect(received == [[1], Array(#"{"timestamp":5,"type":"PING"}"#.utf8), [3, 3]])
        #expect(await client.closed() == .local(code: 2))
    }

    @Test("frames flow both ways independently")
    func bothDirections() async throws {
        let (client, server) = try Self.pair()
        try await client.send([1])
        try await server.send([2])
        var clientFrames = client.inbound.makeAsyncIterator()
        var serverFrames = server.inbound.makeAsyncIterator()
        #expect(try await serverFrames.next().map(TestFrames.bytes) == [1])
        #expect(try await clientFrames.next().map(TestFrames.bytes) == [2])
    }

    @Test("closing ends both inbound sequences")
    func closeEndsBothInbounds() async throws {
        let (client, server) = try Self.pair()
        await server.close(code: 0)
        #expect(try await TestFrames.drain(client.inbound) == [])
        #expect(try await TestFrames.drain(server.inbound) == [])
    }

    @Test("after a close, sending throws closed on both ends; closing again changes nothing")
    func sendAfterCloseThrows() async throws {
        let (client, server) = try Self.pair()
        await client.close(code: 4)
        await client.close(code: 1)
        await server.close(code: 5)
        await #expect(throws: ControlTransportError.closed(.local(code: 4))) { try await client.send([1]) }
        await #expect(throws: ControlTransportError.closed(.peerApplication(code: 4, reason: ""))) {
            try await server.send([1])
        }
        #expect(throws: ControlTransportError.closed(.local(code: 4))) { try client.sendRaw([0, 0, 0, 1, 1]) }
        #expect(await client.closed() == .local(code: 4))
        #expect(await server.closed() == .peerApplication(code: 4, reason: ""))
    }

    @Test("a waiter in closed() is woken by the close")
    func closedWaitsForTheClose() async throws {
        let (client, server) = try Self.pair()
        let waiter = Task { await server.closed() }
        await client.close(code: 3)
        #expect(await waiter.value == .peerApplication(code: 3, reason: ""))
    }

    @Test("send accepts 1 to 262,144 bytes and refuses an empty or larger payload")
    func sendValidatesPayloadLength() async throws {
        let (client, server) = try Self.pair()
        await #expect(throws: ControlProtocolError.self) { try await client.send([]) }
        await #expect(throws: ControlProtocolError.self) {
            try await client.send([UInt8](repeating: 0x20, count: ControlFrame.maxPayloadLength + 1))
        }
        try await client.send([UInt8](repeating: 0x20, count: ControlFrame.maxPayloadLength))
        await client.close(code: 0)
        #expect(try await TestFrames.drain(server.inbound).map(\.count) == [ControlFrame.maxPayloadLength])
    }

    @Test("raw bytes reach the peer as they are, so a malformed frame is a framing error there")
    func sendRawDeliversMalformedFrames() async throws {
        let (client, server) = try Self.pair()
        try client.sendRaw([0, 0, 0])
        try client.sendRaw([1, 0x41, 0, 0, 0, 0])
        var frames = server.inbound.makeAsyncIterator()
        #expect(try await frames.next().map(TestFrames.bytes) == [0x41])
        await #expect(throws: ControlProtocolError.self) { try await frames.next() }
    }

    @Test("the connector reaches the listener on its port and both ends see each other's certificate")
    func connectorReachesListener() async throws {
        let network = InMemoryNetwork()
        let monitor = try TestFrames.certificate()
        let listenerApp = try TestFrames.certificate()
        let listener = network.listen(port: 48_080, identity: monitor)
        let client = try await network.connector(identity: listenerApp)
            .connect(host: "monitor.local", port: 48_080, pinnedFingerprint: monitor.fingerprint)
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(await accepted.next())
        #expect(client.peer == monitor)
        #expect(server.peer == listenerApp)
        try await client.send([7])
        var frames = server.inbound.makeAsyncIterator()
        #expect(try await frames.next().map(TestFrames.bytes) == [7])
    }

    @Test("a pin mismatch fails the connect with both fingerprints, and the listener never sees that connection")
    func pinMismatch() async throws {
        let network = InMemoryNetwork()
        let monitor = try TestFrames.certificate()
        let impostorPin = try TestFrames.certificate().fingerprint
        let rejectedClient = try TestFrames.certificate()
        let acceptedClient = try TestFrames.certificate()
        let listener = network.listen(port: 48_080, identity: monitor)

        let mismatch = ControlTransportError.fingerprintMismatch(expected: impostorPin, actual: monitor.fingerprint)
        await #expect(throws: mismatch) {
            _ = try await network.connector(identity: rejectedClient)
                .connect(host: "monitor.local", port: 48_080, pinnedFingerprint: impostorPin)
        }
        _ = try await network.connector(identity: acceptedClient)
            .connect(host: "monitor.local", port: 48_080, pinnedFingerprint: monitor.fingerprint)
        var accepted = listener.connections.makeAsyncIterator()
        // The first connection the listener sees is the second attempt: the mismatched one never reached it.
        #expect(try #require(await accepted.next()).peer == acceptedClient)
    }

    @Test("connecting where nothing listens is refused")
    func refusedConnection() async throws {
        let network = InMemoryNetwork()
        let monitor = try TestFrames.certificate()
        _ = network.listen(port: 48_080, identity: monitor)
        await #expect(throws: ControlTransportError.handshakeFailed("connection refused")) {
            _ = try await network.connector(identity: try TestFrames.certificate())
                .connect(host: "monitor.local", port: 48_081, pinnedFingerprint: monitor.fingerprint)
        }
    }

    @Test("shutting a listener down closes its connections with code 0, ends its stream and refuses new clients")
    func listenerShutdown() async throws {
        let network = InMemoryNetwork()
        let monitor = try TestFrames.certificate()
        let listener = network.listen(port: 0, identity: monitor)
        #expect(listener.port != 0)
        let connector = network.connector(identity: try TestFrames.certificate())
        let client = try await connector.connect(
            host: "monitor.local",
            port: listener.port,
            pinnedFingerprint: monitor.fingerprint
        )
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(await accepted.next())

        await listener.shutdown()
        await listener.shutdown()

        #expect(await client.closed() == .peerApplication(code: 0, reason: ""))
        #expect(await server.closed() == .local(code: 0))
        #expect(try await TestFrames.drain(client.inbound) == [])
        #expect(await accepted.next() == nil)
        await #expect(throws: ControlTransportError.handshakeFailed("connection refused")) {
            _ = try await connector.connect(
                host: "monitor.local",
                port: listener.port,
                pinnedFingerprint: monitor.fingerprint
            )
        }
        // The port is free again.
        let again = network.listen(port: listener.port, identity: monitor)
        #expect(again.port == listener.port)
    }

    static func pair() throws -> (client: InMemoryControlConnection, server: InMemoryControlConnection) {
        InMemoryControlTransport.pair(client: try TestFrames.certificate(), server: try TestFrames.certificate())
    }
}
