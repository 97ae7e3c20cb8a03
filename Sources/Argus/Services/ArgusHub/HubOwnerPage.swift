import ArgusStore
public import Foundation
import HTTPTypes
public import Hummingbird
public import LocalWebApp
public import Logging
import NIOCore
public import ServiceLifecycle

/// The owner's page (`argus-hub --web PORT`): a web page for the person at the hub's machine, on loopback only and
/// behind a per-run secret in its address (``LocalWebServer``), to make pairing codes, see and revoke the paired
/// devices, and see and forget the CribCall monitors. It does what `argus-hub pair`, `devices` and `monitors` do,
/// on the same database.
public struct HubOwnerPage: Sendable {
    let admin: HubAdmin
    let fingerprint: String
    let monitors: HubMonitorCameras?
    let directory: URL

    /// - Parameter database: The hub's own: the page never opens the database a second time beside it.
    init(directory: URL, database: ArgusDatabase, fingerprint: String, monitors: HubMonitorCameras?) {
        admin = HubAdmin(database: database)
        self.fingerprint = fingerprint
        self.monitors = monitors
        self.directory = directory
    }

    /// Serves the page on loopback at `port` (0: any free port) until the returned server is closed.
    public func serve(port: Int) async throws -> LocalWebServer {
        guard let resources = Bundle.module.resourceURL else {
            throw HubError("the owner's page is missing from the build: rebuild argus-hub")
        }
        let assets = try StaticAssets(directory: resources.appendingPathComponent("Public"))
        return try await LocalWebServer.start(port: port, name: "argus-hub") { router in
            assets.addRoutes(to: router)
            addAPI(to: router)
        }
    }

    func addAPI(to router: Router<BasicRequestContext>) {
        router.get("/api/state") { _, _ in try await answer(state()) }
        router.post("/api/pairing-code") { request, _ in
            try await withBody(request) { _ in
                let (code, expiresAt) = try admin.pair()
                return try answer([
                    "pairing_code": code, "expires_at": ISO8601DateFormatter().string(from: expiresAt),
                    "expires_in_seconds": 300, "cert_fingerprint": fingerprint,
                ])
            }
        }
        router.post("/api/devices/revoke") { request, _ in
            try await withBody(request) { body in
                guard let id = body["device_id"] as? String, !id.isEmpty, id.count <= 200 else {
                    return refusal(.badRequest, "device_id names the device to revoke.")
                }
                let device = try admin.revoke(id)
                return try answer(["revoked": device.deviceId])
            }
        }
        router.post("/api/monitors/forget") { request, _ in
            try await withBody(request) { body in
                guard let id = body["monitor_id"] as? String, !id.isEmpty, id.count <= 200 else {
                    return refusal(.badRequest, "monitor_id names the monitor to forget.")
                }
                return try answer(["message": try await HubLaunch.forgetMonitor(directory, id)])
            }
        }
    }

    /// The devices (newest first) and monitors the page shows.
    func state() async throws -> [String: Any] {
        let format = ISO8601DateFormatter()
        let devices = try admin.devices().sorted { $0.createdAt > $1.createdAt }.map { device -> [String: Any] in
            [
                "device_id": device.deviceId, "device_name": device.deviceName, "device_type": device.deviceType,
                "active": device.isActive, "paired_at": format.string(from: device.createdAt),
                "last_seen_at": device.lastSeenAt.map { format.string(from: $0) } ?? NSNull(),
                "push": device.apnsToken != nil,
            ]
        }
        let monitors = await monitors?.monitors() ?? []
        return [
            "cert_fingerprint": fingerprint, "devices": devices, "watches_monitors": self.monitors != nil,
            "monitors": monitors.map { ["monitor_id": $0.id, "name": $0.name, "online": $0.online] as [String: Any] },
        ]
    }

    /// Runs `body` with the request's JSON object; refuses anything else, and turns the hub's refusals into 4xx
    /// answers with their words. Requiring `application/json` keeps other web pages out: a form on another site
    /// cannot send it, and nothing here answers a CORS preflight.
    func withBody(_ request: Request, _ body: ([String: Any]) async throws -> Response) async throws -> Response {
        guard request.headers[.contentType]?.hasPrefix("application/json") == true else {
            return refusal(.unsupportedMediaType, "Send a JSON object (Content-Type: application/json).")
        }
        let buffer = try await request.body.collect(upTo: 4096)
        let object =
            buffer.readableBytes == 0
            ? [:] : try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any]
        guard let object else { return refusal(.badRequest, "The body is not a JSON object.") }
        do {
            return try await body(object)
        } catch let error as HubError {
            return refusal(.notFound, error.description)
        } catch let failure as HubFailure {
            return refusal(.badGateway, failure.description)
        }
    }

    func answer(_ object: [String: Any]) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    func refusal(_ status: HTTPResponse.Status, _ detail: String) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: ["detail": detail])) ?? Data()
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The owner's page as a service of the hub: serves from start to shutdown, and says where.
struct HubOwnerPageService: Service {
    let page: HubOwnerPage
    let port: Int
    let logger: Logger
    let onServing: @Sendable (_ url: String) async -> Void

    func run() async throws {
        let server = try await page.serve(port: port)
        await onServing(server.url)
        try? await gracefulShutdown()
        await server.close()
    }
}
