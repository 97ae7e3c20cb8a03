/// Why discovery failed, with a message that says what to do.
public struct ServiceDiscoveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: String, Sendable, Hashable {
            case daemonNotRunning, registrationFailed, browseFailed, nameConflict, invalidAdvertisement
        }

        private let backing: Backing

        private init(_ backing: Backing) { self.backing = backing }

        /// The mDNS daemon (Avahi on Linux) is not reachable.
        public static let daemonNotRunning = Code(.daemonNotRunning)
        /// The daemon refused or failed the registration.
        public static let registrationFailed = Code(.registrationFailed)
        /// Browsing or resolving failed.
        public static let browseFailed = Code(.browseFailed)
        /// Another service already uses the instance name.
        public static let nameConflict = Code(.nameConflict)
        /// The advertisement cannot be published (e.g. a TXT entry over 255 bytes, a bad port or instance name).
        public static let invalidAdvertisement = Code(.invalidAdvertisement)

        public var description: String { backing.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do about it.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

extension ServiceDiscoveryError {
    static let daemonNotRunning = ServiceDiscoveryError(
        code: .daemonNotRunning,
        message: "the Avahi daemon is not running: start it with `systemctl start avahi-daemon`"
    )
}
