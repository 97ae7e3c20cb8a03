public import Logging
public import ServiceLifecycle
public import UnixSignals

/// How a long-running program runs its parts: swift-service-lifecycle services in one ServiceGroup, started in the
/// order given and stopped in the reverse one (each after the one started after it has ended), on SIGINT or SIGTERM,
/// or when a part ends that the program cannot go on without. A part that fails stops the program gracefully too,
/// and its error is what `run()` throws.
public enum ProgramLifecycle {
    /// A part of a program.
    public struct Part: Sendable {
        public var service: any Service
        /// Its own end (without an error) stops the program; false for a part that may end and leave the rest
        /// running (a detector whose source ran out).
        public var endsProgram: Bool
        /// How the group's log (debug) names it: its description, or its type's name.
        public var name: String

        public init(_ service: any Service, endsProgram: Bool = true) {
            self.service = service
            self.endsProgram = endsProgram
            name = (service as? any CustomStringConvertible)?.description ?? String(describing: type(of: service))
        }
    }

    /// A part under its name, so the group's log says "Starting service sl-service=uploads" rather than a dump of
    /// the part's fields.
    struct Named: Service, CustomStringConvertible {
        let service: any Service
        let description: String

        func run() async throws {
            try await service.run()
        }
    }

    /// A part that holds something open and lets go of it at its turn to stop (an announcement withdrawn, a
    /// recording saved, a server closed).
    public struct AtShutdown: Service, CustomStringConvertible {
        private let release: @Sendable () async -> Void
        /// What it lets go of, for the log.
        public let description: String

        /// - Parameter name: What it lets go of ("the announcement"), for the log.
        public init(_ name: String, _ release: @escaping @Sendable () async -> Void) {
            self.release = release
            description = name
        }

        public func run() async {
            try? await gracefulShutdown()
            await release()
        }
    }

    /// Runs `parts` until the program stops. - Throws: The error of the part that failed.
    public static func run(_ parts: [Part], logger: Logger) async throws {
        try await group(parts, logger: logger).run()
    }

    /// The group that runs `parts`.
    public static func group(_ parts: [Part], logger: Logger) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: parts.map { part in
                    .init(
                        service: Named(service: part.service, description: part.name),
                        successTerminationBehavior: part.endsProgram ? .gracefullyShutdownGroup : .ignore,
                        failureTerminationBehavior: .gracefullyShutdownGroup)
                }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    }
}
