import CanonicalJSON
import ControlTransport
import CribCallMonitor
import CribCallStore
import CribCallTestSupport
import CribCallWeb
import DeviceIdentity
import Foundation
import LocalWebApp
import StreamMedia
import TestSupport
import Testing

/// A monitor on the in-memory transport watching a camera twin, its app served on loopback as `cribcall monitor
/// --web` serves it (every monitor event passed to the app), and requests to it.
final class WebRig: Sendable {
    let network = InMemoryNetwork()
    let identity: DeviceIdentity
    let database: CribCallDatabase
    let service: MonitorService
    let camera = TestCamera()
    let app: MonitorWebApp
    let server: LocalWebServer
    private let listener: InMemoryListener
    private let tasks: [Task<Void, Never>]

    let media = InMemoryMediaEngine()

    init(database: CribCallDatabase? = nil, camera watched: Bool = true) async throws {
        let identity = try DeviceIdentity.generate(now: Date())
        self.identity = identity
        self.database = try database ?? CribCallDatabase.inMemory()
        listener = network.listen(port: 48080, identity: PeerCertificate(identity: identity))
        let service = try MonitorService(
            identity: identity, database: self.database, transport: listener, mediaEngine: media)
        self.service = service
        let app = MonitorWebApp(
            service: service, database: self.database, camera: watched ? camera : nil, mediaEngine: media,
            version: "test")
        self.app = app
        let camera = camera
        var tasks = [
            Task { await service.run() },
            Task { for await event in service.events { await app.observe(event) } },
        ]
        if watched { tasks.append(Task { await service.watchSafety(camera: camera) }) }
        self.tasks = tasks
        server = try await app.serve(port: 0)
    }

    /// Frames until the app's state says monitoring is active, and from then on until ``stop()``.
    func activate() async throws {
        camera.keepShowing()
        try await eventually("monitoring to be active") {
            (try? await self.state())?["safety"]?["monitoring"]?.stringValue == "active"
        }
    }

    func get(_ path: String) async throws -> LoopbackHTTP.Answer {
        try await LoopbackHTTP.get(server.url + path)
    }

    func post(_ path: String, _ body: String = "{}") async throws -> LoopbackHTTP.Answer {
        try await LoopbackHTTP.post(server.url + path, body)
    }

    func json(_ answer: LoopbackHTTP.Answer) throws -> JSONValue {
        try JSONParser().parse(answer.body)
    }

    func state() async throws -> JSONValue {
        try json(try await get("api/state"))
    }

    func stop() async {
        await camera.stopShowing()
        await app.closeStreams()
        await server.close()
        await listener.shutdown()
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
