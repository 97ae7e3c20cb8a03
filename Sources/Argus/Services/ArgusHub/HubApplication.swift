import ArgusAPI
import ArgusCribCall
public import ArgusPush
import ArgusStore
import ArgusTokens
public import ConnectionGuard
import DeviceIdentity
public import Foundation
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOSSL
import OpenAPIHummingbird
import ServiceDiscovery
import ServiceLifecycle

/// What an `argus-hub` run serves.
public struct HubConfiguration: Sendable {
    public var dataDirectory: URL
    /// Where to listen: every interface by default (HTTPS).
    public var host = "0.0.0.0"
    /// Plain HTTP instead of HTTPS: only on a loopback address (tests, the owner's tools on this machine).
    public var plainHTTP = false
    /// 0: any free port (``onReady`` says which).
    public var port = 8443
    public var version = ArgusVersion.current
    /// The cameras to watch (`--camera`); their motion becomes events with thumbnails.
    public var cameraSpecs: [CameraSpec] = []
    /// Seconds between two motion events of one camera.
    public var motionCooldown: Double = 30
    /// Watch the CribCall monitors paired with `argus-hub monitors pair` as cameras.
    public var watchesMonitors = true
    /// The local addresses the monitors' streams (their pictures) use; empty: every interface but loopback.
    public var iceAddresses: [String] = []
    /// Slow and greedy clients: a deadline for each request head, an idle timeout, connections per address.
    public var connectionLimits = ConnectionLimits()
    /// Serve the owner's page on this loopback port (0: any free port); nil: no page.
    public var ownerPagePort: Int?
    /// Called with the owner's page's address (its secret included) once it is served.
    public var onOwnerPage: (@Sendable (_ url: String) async -> Void)?
    /// Push notifications through APNs (nil: none).
    public var push: APNsConfiguration?
    /// Announce `_argus._tcp` on the LAN (Bonjour), with the certificate fingerprint in its TXT record.
    public var advertises = true
    /// The name the LAN sees.
    public var serviceName = "Argus on \(ProcessInfo.processInfo.hostName)"
    /// Called once the server listens, with its port and the certificate fingerprint the app pins.
    public var onReady: (@Sendable (_ port: Int, _ fingerprint: String) async -> Void)?
    /// The clock (tests move it).
    public var now: @Sendable () -> Date = { Date() }

    public init(dataDirectory: URL) {
        self.dataDirectory = dataDirectory
    }

    /// Why this configuration cannot run, in words that say what to do (nil: it can).
    public var problem: String? {
        guard !plainHTTP || ["127.0.0.1", "::1", "localhost"].contains(host) else {
            return "--http serves without TLS, so only on loopback: add --host 127.0.0.1, or leave out --http."
        }
        guard (0...65_535).contains(port) else { return "--port \(port) is not a port (0 to 65535; 0: any free one)." }
        if let web = ownerPagePort, !(0...65_535).contains(web) {
            return "--web \(web) is not a port (0 to 65535; 0: any free one)."
        }
        var names: [String: CameraSpec] = [:]
        for spec in cameraSpecs {
            if let first = names[spec.name.lowercased()] {
                return """
                    Two cameras are named "\(first.name)": give each its own name, e.g. \
                    --camera "\(first.name)=\(first.source)" --camera "\(spec.name) 2=\(spec.source)".
                    """
            }
            names[spec.name.lowercased()] = spec
        }
        return nil
    }
}

public enum ArgusVersion {
    public static let current = "0.1.0"
}

/// The hub as a Hummingbird application: the generated mobile API behind ``HubGate``, over the hub's database and
/// its two secrets (created 0600 on the first start).
public func makeHubApplication(_ configuration: HubConfiguration, logger: Logger) async throws
    -> some ApplicationProtocol
{
    if let problem = configuration.problem { throw HubError(problem) }
    let directory = configuration.dataDirectory
    let secrets: HubSecrets
    do {
        secrets = try HubSecrets.loadOrCreate(directory: directory)
    } catch {
        throw HubError("\(error)")
    }
    let database = try ArgusDatabase(directory: directory)
    let metrics = HubMetrics()
    var push: HubPush?
    if let apns = configuration.push {
        do {
            push = HubPush(
                client: try await APNsClient(apns, logger: logger), database: database, metrics: metrics,
                logger: logger)
        } catch {
            throw HubError("\(error)")
        }
    }
    let onEvent: @Sendable (CameraEvent) async -> Void = { [push] event in
        guard let push else { return }
        Task { await push.notify(event) }  // never holds up the camera
    }
    let retention = EventRetention(database: database, logger: logger)
    let cameras: HubCameraSet
    do {
        cameras = try HubCameraSet(
            configuration.cameraSpecs, database: database, motionCooldown: configuration.motionCooldown,
            retention: retention, logger: logger, onEvent: onEvent)
    } catch {
        await push?.close()  // its connection pool must be closed before it goes
        throw error
    }
    var monitors: HubMonitorCameras?
    if configuration.watchesMonitors {
        do {
            monitors = try await HubMonitorCameras(
                NurseryMonitors(
                    data: NurseryCommands.data(hub: directory), name: configuration.serviceName,
                    iceAddresses: configuration.iceAddresses, logger: logger),
                database: database, retention: retention, logger: logger, onEvent: onEvent)
        } catch {
            await push?.close()
            throw HubError("the CribCall monitors cannot be watched: \(error)")
        }
    }
    let api = HubAPI(
        database: database, tokens: await AccessTokens(privateKey: secrets.signingKey, keyId: secrets.keyId),
        adminKey: secrets.adminKey, limits: HubLimits(),
        cameras: HubCameraGroup(monitors.map { [cameras, $0] } ?? [cameras]),
        version: configuration.version, metrics: metrics, logger: logger, now: configuration.now)
    let router = Router(context: HubRequestContext.self)
    router.add(middleware: HubGate(logger: logger, metrics: metrics))
    // Prometheus's text format, for this machine only (a scraper on the hub, or through an SSH tunnel).
    router.get("/metrics") { _, _ -> Response in
        guard Caller.current?.isLoopback == true else {
            return HubGate<HubRequestContext>.error(
                .forbidden, "/metrics is for the hub's own machine.", code: "forbidden")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.text)))
    }
    try api.registerHandlers(on: router)
    let onReady = configuration.onReady
    let port = configuration.port
    let fingerprint = secrets.certificateFingerprint
    var services: [any Service] = [cameras]
    if let monitors { services.append(monitors) }
    if let ownerPort = configuration.ownerPagePort {
        let page = HubOwnerPage(directory: directory, database: database, fingerprint: fingerprint, monitors: monitors)
        services.append(
            HubOwnerPageService(page: page, port: ownerPort, logger: logger) { url in
                await configuration.onOwnerPage?(url)
            })
    }
    if let push { services.append(push) }
    let (ports, announcePort) = AsyncStream.makeStream(of: Int.self)
    if configuration.advertises {
        services.append(
            ServiceAnnouncement(
                serviceType: "_argus._tcp", instanceName: configuration.serviceName,
                txt: [
                    "v": "1", "path": "/api/v1/mobile", "tls": configuration.plainHTTP ? "0" : "1", "fp": fingerprint,
                ], ports: ports, logger: logger))
    }
    let guarding = ConnectionGuard(configuration.connectionLimits) { address, reason in
        logger.info("connection closed", metadata: ["address": "\(address)", "reason": "\(reason.rawValue)"])
    }
    let http = HTTP1Channel.Configuration(
        additionalChannelHandlers: guarding.handlers(), idleTimeout: configuration.connectionLimits.idleTimeAmount)
    let server: HTTPServerBuilder
    if configuration.plainHTTP {
        server = .http1(configuration: http)
    } else {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: secrets.tls.certificateDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(secrets.tls.privateKeyPEM().utf8), format: .pem)))
        tls.minimumTLSVersion = .tlsv13
        server = try .tls(.http1(configuration: http), tlsConfiguration: tls)
    }
    return Application(
        router: router, server: server,
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: port), serverName: "argus-hub"),
        services: services,
        onServerRunning: { channel in
            let listening = channel.localAddress?.port ?? port
            announcePort.yield(listening)
            announcePort.finish()
            await onReady?(listening, fingerprint)
        },
        logger: logger)
}

/// Why the hub cannot start or do what it was asked, with what to do.
public struct HubError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// A hub command that could not be done (not a mistake in its arguments), with why.
public struct HubFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
}
