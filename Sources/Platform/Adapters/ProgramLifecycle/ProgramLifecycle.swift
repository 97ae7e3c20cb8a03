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

        public init(_ service: any Service, endsProgram: Bool = true) {
            self.service = service
            self.endsProgram = endsProgram
        }
    }

    /// A part that holds something open and lets go of it at its turn to stop (an announcement withdrawn, a
    /// recording saved, a server closed).
    public struct AtShutdown: Service {
        private let release: @Sendable () async -> Void

        public init(_ release: @escaping @Sendable () async -> Void) {
            self.release = release
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
                        service: part.service,
                        successTerminationBehavior: part.endsProgram ? .gracefullyShutdownGroup : .ignore,
                        failureTerminationBehavior: .gracefullyShutdownGroup)
                }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    }
}
