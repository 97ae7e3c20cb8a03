/// Why desktop notifications are unavailable or one could not be shown. ``message`` is one line for people.
public struct DesktopNotificationError: Error, Hashable, CustomStringConvertible {
    /// What kind of failure it is; compare against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case noSessionBus, noNotificationService, timedOut, busy, failed
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// There is no D-Bus session bus (no address in the environment, or it cannot be reached).
        public static let noSessionBus = Self(.noSessionBus)
        /// The session bus has no notification server (nothing owns or activates `org.freedesktop.Notifications`).
        public static let noNotificationService = Self(.noNotificationService)
        /// The bus or the notification server did not answer within the time bound.
        public static let timedOut = Self(.timedOut)
        /// Too many notifications are still waiting for a hung server; this one was dropped.
        public static let busy = Self(.busy)
        /// The server answered with an error, or libdbus failed (e.g. out of memory).
        public static let failed = Self(.failed)

        public var description: String { base.rawValue }
    }

    /// What kind of failure it is.
    public var code: Code
    /// What happened and, where it helps, what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
