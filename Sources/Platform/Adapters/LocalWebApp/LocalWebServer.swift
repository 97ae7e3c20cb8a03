public import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A web app for the person at this machine: HTTP on loopback only, every address under `/s/<secret>/`
/// (``SecretGate``), the browser security headers on every response (``SecurityHeaders``). Runs until ``close()``.
public final class LocalWebServer: Sendable {
    /// The port it listens on (the one asked for, or the one the system chose for 0).
    public let port: Int
    /// The app's address, with its secret: the one link that opens it.
    public let url: String
    private let task: Task<Void, any Error>
    private let group: ServiceGroup

    private init(port: Int, url: String, task: Task<Void, any Error>, group: ServiceGroup) {
        self.port = port
        self.url = url
        self.task = task
        self.group = group
    }

    /// Starts serving and returns once the port is bound.
    ///
    /// - Parameters:
    ///   - host: `127.0.0.1` (default) or `::1`; the app is for this machine only.
    ///   - port: 0 for any free port.
    ///   - secret: The secret every address carries.
    ///   - name: The app's name, for the page a visitor without the secret sees.
    ///   - routes: Adds the app's routes, written as if it lived at `/` (files, API).
    /// - Throws: ``LocalWebAppError`` when the port cannot be bound (taken, or not allowed).
    public static func start(
        host: String = "127.0.0.1", port: Int, secret: WebSecret = WebSecret(), name: String,
        routes: (Router<BasicRequestContext>) -> Void
    ) async throws -> LocalWebServer {
        let router = Router(context: BasicRequestContext.self)
        routes(router)
        let gate = SecretGate(
            secret: secret,
            refusal: "This address needs the secret link that \(name) printed when it started "
                + "(http://\(host):…/s/…/). Open that link, or start \(name) again for a new one.",
            inner: router)
        var logger = Logger(label: "local web app")
        // Request logging would write the secret into logs: warnings only.
        logger.logLevel = .warning
        let (bound, announce) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: gate,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                announce.yield(channel.localAddress?.port ?? port)
                announce.finish()
            },
            logger: logger)
        // In a service group of its own, so ``close()`` shuts it down gracefully (open requests finish).
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { announce.finish() }
            try await group.run()
        }
        var iterator = bound.makeAsyncIterator()
        guard let actual = await iterator.next() else {
            let failure: String
            do {
                try await task.value
                failure = "the web server stopped at once"
            } catch {
                failure = "\(error)"
            }
            throw LocalWebAppError(
                "cannot serve the web app on \(host):\(port) (\(failure)): is the port taken? Choose another one.")
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return LocalWebServer(
            port: actual, url: "http://\(shownHost):\(actual)/s/\(secret.text)/", task: task, group: group)
    }

    /// Stops serving: no new connection; open requests finish, open event streams end.
    public func close() async {
        await group.triggerGracefulShutdown()
        let deadline = Task {
            try? await Task.sleep(for: .seconds(2))
            task.cancel()
        }
        _ = try? await task.value
        deadline.cancel()
    }
}
