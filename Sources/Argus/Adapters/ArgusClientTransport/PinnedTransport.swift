public import AsyncHTTPClient
import DeviceIdentity
public import Foundation
import NIOCore
import NIOPosix
import NIOSSL
public import OpenAPIAsyncHTTPClient
import Synchronization

/// The HTTP transport of an app that trusts one hub: its own self-signed certificate, pinned by the SHA-256 of the
/// certificate's DER bytes (what `argus-hub pair` prints, or its QR code carries). Before the first request the
/// hub's certificate is fetched and compared with the pin in constant time; from then on that certificate is the
/// only trust root of the connection (TLS 1.3 only, no CA, no host name: the pin is the identity), so a later
/// connection to anything else fails its handshake.
public final class PinnedTransport: Sendable {
    public let client: HTTPClient
    public let transport: AsyncHTTPClientTransport

    /// Connects to `hub` (https://HOST:PORT; http:// only for a loopback address) checking `fingerprint`.
    /// - Throws: ``TransportError`` when the hub cannot be reached, or its certificate is not the pinned one.
    public static func connect(to hub: URL, fingerprint: String) async throws -> PinnedTransport {
        guard let host = hub.host else { throw TransportError.badAddress("\(hub) has no host") }
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        switch hub.scheme {
        case "https":
            let pinned = try await certificate(host: host, port: hub.port ?? 443, fingerprint: fingerprint)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.minimumTLSVersion = .tlsv13
            tls.trustRoots = .certificates([pinned])
            tls.certificateVerification = .noHostnameVerification
            configuration.tlsConfiguration = tls
        case "http" where ["127.0.0.1", "::1", "localhost"].contains(host):
            break
        default:
            throw TransportError.badAddress("--hub is https://HOST:PORT (plain http only on this machine's loopback)")
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return PinnedTransport(client: client)
    }

    private init(client: HTTPClient) {
        self.client = client
        transport = AsyncHTTPClientTransport(configuration: .init(client: client, timeout: .seconds(30)))
    }

    /// Closes its connections.
    public func shutdown() async {
        try? await client.shutdown()
    }

    /// The hub's certificate when its SHA-256 is `fingerprint` (a TLS handshake that only reads the certificate).
    static func certificate(host: String, port: Int, fingerprint: String) async throws -> NIOSSLCertificate {
        guard let wanted = CertificateFingerprint(hex: fingerprint.filter(\.isHexDigit)) else {
            throw TransportError.badAddress("--fingerprint is the 64 hex digits `argus-hub pair` prints")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.certificateVerification = .none
        let context = try NIOSSLContext(configuration: tls)
        let seen = Seen()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context, serverHostname: nil,
                            customVerificationCallback: { certificates, promise in
                                seen.value.withLock { $0 = certificates.first }
                                promise.succeed(.certificateVerified)
                            })
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            throw TransportError.unreachable("\(host):\(port): \(error)")
        }
        // The callback runs during the handshake; wait for it (bounded), then hang up.
        let deadline = ContinuousClock.now + .seconds(10)
        while seen.value.withLock({ $0 }) == nil, channel.isActive, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        try? await channel.close()
        guard let certificate = seen.value.withLock({ $0 }) else {
            throw TransportError.unreachable("\(host):\(port) completed no TLS 1.3 handshake")
        }
        let seenFingerprint = CertificateFingerprint(certificateDER: try certificate.toDERBytes())
        // compared in constant time (CertificateFingerprint's ==)
        guard seenFingerprint == wanted else { throw TransportError.pinMismatch(seen: seenFingerprint.hex) }
        return certificate
    }
}

/// The certificate a handshake showed.
private final class Seen: Sendable {
    let value = Mutex<NIOSSLCertificate?>(nil)
}

/// Why the hub could not be reached safely.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    case badAddress(String)
    case unreachable(String)
    /// The hub presented another certificate than the one paired with: possibly someone in between. Nothing is sent.
    case pinMismatch(seen: String)

    public var description: String {
        switch self {
        case .badAddress(let why): why
        case .unreachable(let why): "the hub cannot be reached: \(why)"
        case .pinMismatch(let seen):
            "the hub's certificate is not the one paired with (it is \(seen.prefix(16))…): nothing was sent. "
                + "If the hub was reinstalled, pair again with its new fingerprint."
        }
    }
}
