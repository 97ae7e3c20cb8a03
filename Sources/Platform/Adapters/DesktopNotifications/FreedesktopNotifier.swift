public import Foundation
import Synchronization

/// Shows notifications through the freedesktop.org Desktop Notifications service
/// (`org.freedesktop.Notifications` on the D-Bus session bus: GNOME, KDE, dunst, mako, xfce4-notifyd …).
///
/// Create one with ``connect(environment:applicationName:timeout:)``, which fails quickly with a clear reason when
/// there is no session bus or no notification server. Every call returns within ``timeout`` even when the server
/// hangs; at most ``maximumPending`` calls wait behind a hung server, later ones fail at once with
/// ``DesktopNotificationError/Code/busy`` so a stuck daemon can never hold up the caller or use up memory.
///
/// Notifications carry their ``DesktopNotification/actions`` as buttons when the server has the `actions`
/// capability; clicks arrive from ``actionInvocations()``. Only the `ActionInvoked` signals of the connection that
/// owns `org.freedesktop.Notifications`, for a notification this notifier showed that is still open and offered
/// that key, count; every other signal is ignored.
public final class FreedesktopNotifier: NotificationPresenter {
    /// What the notification server says about itself (`GetServerInformation`).
    public struct ServerInformation: Sendable, Hashable {
        /// The product name, e.g. `gnome-shell`.
        public var name: String
        /// The vendor, e.g. `GNOME`.
        public var vendor: String
        /// The server's version.
        public var version: String
        /// The version of the specification it implements, e.g. `1.2`.
        public var specificationVersion: String
    }

    /// The time bound of one call, unless ``connect(environment:applicationName:timeout:)`` is given another.
    public static let defaultTimeout: Duration = .seconds(2)
    /// How many calls may wait behind a server that does not answer before new ones are dropped.
    public static let maximumPending = 4

    /// The server this notifier talks to.
    public let server: ServerInformation
    /// The server's optional capabilities (`GetCapabilities`), e.g. `actions`, `body`, `body-markup`, `persistence`.
    public let capabilities: Set<String>
    /// The `app_name` sent with every notification.
    public let applicationName: String
    /// The bound of each call.
    public let timeout: Duration

    private let bus: SessionBusConnection
    /// Which notifications can be clicked, and the invocation streams (internal for tests).
    let router: NotificationActionRouter
    private let state = Mutex(State())

    private struct State {
        var idsByTag: [String: UInt32] = [:]
        var pending = 0
    }

    private static let service = "org.freedesktop.Notifications"
    private static let path = "/org/freedesktop/Notifications"

    private init(
        bus: SessionBusConnection, router: NotificationActionRouter, server: ServerInformation,
        capabilities: Set<String>, applicationName: String, timeout: Duration
    ) {
        self.bus = bus
        self.router = router
        self.server = server
        self.capabilities = capabilities
        self.applicationName = applicationName
        self.timeout = timeout
    }

    deinit {
        router.invocations.finish()
    }

    /// Connects to the session bus and checks that a notification server is there.
    ///
    /// Looks for the bus in `DBUS_SESSION_BUS_ADDRESS`, then at `$XDG_RUNTIME_DIR/bus`; it never starts a bus.
    /// A notification server that is D-Bus activatable is started by the bus.
    ///
    /// - Parameters:
    ///   - environment: Where to look for the bus address (the process environment by default).
    ///   - applicationName: The `app_name` of every notification.
    ///   - timeout: The bound of this call and of every later one.
    /// - Returns: A notifier.
    /// - Throws: ``DesktopNotificationError`` with code `noSessionBus`, `noNotificationService`, `timedOut` or
    ///   `failed`; its message is one line suitable for a warning.
    public static func connect(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        applicationName: String = "CribCall",
        timeout: Duration = defaultTimeout
    ) async throws -> FreedesktopNotifier {
        guard let address = SessionBusAddress.resolve(environment: environment) else {
            throw DesktopNotificationError(
                .noSessionBus,
                "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist)")
        }
        let router = NotificationActionRouter()
        let bus = SessionBusConnection(address: address, handlers: router.handlers)
        let (server, capabilities) = try await mapping(timeout: timeout) {
            try await bus.perform(timeout: timeout) { caller in
                let information = try caller.call(
                    destination: service, path: path, interface: service, member: "GetServerInformation"
                ).strings()
                guard information.count == 4 else {
                    throw DBusFailure.unexpectedReply("GetServerInformation returned \(information.count) strings")
                }
                let capabilities = try caller.call(
                    destination: service, path: path, interface: service, member: "GetCapabilities"
                ).stringArray()
                let server = ServerInformation(
                    name: information[0], vendor: information[1], version: information[2],
                    specificationVersion: information[3])
                return (server, Set(capabilities))
            }
        }
        return FreedesktopNotifier(
            bus: bus, router: router, server: server, capabilities: capabilities,
            applicationName: NotificationText.sanitized(applicationName, limit: NotificationText.nameLimit),
            timeout: timeout)
    }

    /// Shows `notification` (`org.freedesktop.Notifications.Notify`), replacing the previous one with its tag.
    ///
    /// Text is made safe for D-Bus (valid UTF-8, no control characters) and bounded: summary 256 bytes, body
    /// 1 KiB; the body is markup-escaped when the server interprets markup. Actions are sent only when the server
    /// has the `actions` capability: at most ``DesktopNotification/maximumActions``, key and label 64 bytes each.
    ///
    /// - Parameter notification: What to show.
    /// - Returns: The server's id of the notification.
    /// - Throws: ``DesktopNotificationError``; `timedOut` after ``timeout``, `busy` when ``maximumPending`` calls
    ///   already wait.
    @discardableResult
    public func notify(_ notification: DesktopNotification) async throws -> UInt32 {
        let admitted = state.withLock { state in
            guard state.pending < Self.maximumPending else { return false }
            state.pending += 1
            return true
        }
        guard admitted else {
            throw DesktopNotificationError(
                .busy,
                "the desktop notification server has not answered the last \(Self.maximumPending) "
                    + "notifications; this one was dropped")
        }
        let markup = capabilities.contains("body-markup")
        let arguments = NotifyArguments(
            applicationName: applicationName,
            icon: NotificationText.sanitized(notification.icon, limit: NotificationText.nameLimit),
            summary: NotificationText.sanitized(notification.summary, limit: NotificationText.summaryLimit),
            body: NotificationText.body(notification.body, markup: markup),
            urgency: notification.urgency.rawValue,
            category: notification.category.map {
                NotificationText.sanitized($0.rawValue, limit: NotificationText.nameLimit)
            },
            expireTimeout: notification.expiration.milliseconds,
            actions: capabilities.contains("actions") ? NotificationText.actions(notification.actions) : [])
        let tag = notification.tag
        return try await Self.mapping(timeout: timeout) {
            try await bus.perform(timeout: timeout) { [self] caller in
                defer { state.withLock { $0.pending -= 1 } }
                // Read the id to replace here, on the bus queue, so that two notifications with one tag sent at
                // once still replace each other in order.
                let replaces = tag.flatMap { tag in state.withLock { $0.idsByTag[tag] } } ?? 0
                let reply = try caller.call(
                    destination: Self.service, path: Self.path, interface: Self.service, member: "Notify"
                ) { writer in
                    try arguments.write(to: writer, replacing: replaces)
                }
                let id = try reply.uint32()
                if let tag { state.withLock { $0.idsByTag[tag] = id } }
                // Still on the bus queue: the id is known before any signal that arrived with the reply is handled.
                router.shown(
                    id: id, replacing: replaces, tag: tag, keys: arguments.actions.map(\.key), server: reply.sender)
                return id
            }
        }
    }

    /// A new stream of the clicks on this notifier's notifications.
    ///
    /// Every stream gets every invocation from the moment it is made; each keeps the newest 16 its reader has not
    /// taken yet. Streams end when the notifier is released.
    ///
    /// - Returns: The invocations, in the order the server sent them.
    public func actionInvocations() -> AsyncStream<DesktopNotification.Invocation> {
        router.invocations.stream()
    }

    /// Runs `body`, turning internal failures into ``DesktopNotificationError``.
    private static func mapping<T>(
        timeout: Duration, _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch let failure as DBusFailure {
            throw DesktopNotificationError(failure, timeout: timeout)
        }
    }
}

/// The arguments of `Notify(s app_name, u replaces_id, s app_icon, s summary, s body, as actions, a{sv} hints,
/// i expire_timeout) → u id`, already sanitised.
private struct NotifyArguments: Sendable {
    var applicationName: String
    var icon: String
    var summary: String
    var body: String
    var urgency: UInt8
    var category: String?
    var expireTimeout: Int32
    /// Already bounded (``NotificationText/actions(_:)``); empty when the server does not support actions.
    var actions: [DesktopNotification.Action]

    func write(to writer: MessageWriter, replacing id: UInt32) throws {
        try writer.append(applicationName)
        try writer.append(id)
        try writer.append(icon)
        try writer.append(summary)
        try writer.append(body)
        try writer.appendArray(of: "s") { list in  // flat: key, label, key, label, …
            for action in actions {
                try list.append(action.key)
                try list.append(action.label)
            }
        }
        try writer.appendArray(of: "{sv}") { hints in
            try hints.appendDictEntry { entry in
                try entry.append("urgency")
                try entry.appendVariant("y") { try $0.append(urgency) }
            }
            if let category {
                try hints.appendDictEntry { entry in
                    try entry.append("category")
                    try entry.appendVariant("s") { try $0.append(category) }
                }
            }
        }
        try writer.append(expireTimeout)
    }
}

extension DesktopNotificationError {
    fileprivate init(_ failure: DBusFailure, timeout: Duration) {
        switch failure {
        case .noBus(let message):
            self.init(.noSessionBus, message)
        case .timedOut:
            self.init(.timedOut, "the desktop notification server did not answer within \(timeout)")
        case .errorReply(let name, let message)
        where name == "org.freedesktop.DBus.Error.ServiceUnknown"
            || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
            || name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
            self.init(
                .noNotificationService,
                "no desktop notification service on the session bus (nothing provides org.freedesktop.Notifications; "
                    + "start a notification daemon such as dunst or use a desktop session): \(message)")
        case .errorReply(let name, let message):
            self.init(.failed, "the desktop notification server answered \(name): \(message)")
        case .outOfMemory:
            self.init(.failed, "libdbus ran out of memory")
        case .unexpectedReply(let detail):
            self.init(.failed, "the desktop notification server answered unexpectedly: \(detail)")
        }
    }
}
