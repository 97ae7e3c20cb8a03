import Synchronization

/// Joins a ``FreedesktopNotifier``'s bus connection to its ``NotificationActionTracker`` and to the streams of
/// ``FreedesktopNotifier/actionInvocations()``.
///
/// The connection's handlers hold the router, the router never holds the connection: the notifier owns both.
final class NotificationActionRouter: Sendable {
    /// The streams of invocations.
    let invocations = InvocationBroadcaster()
    private let tracker = Mutex(NotificationActionTracker())

    /// What the bus connection does for actions: the match rules, asking the bus who owns the notification service
    /// after every (re)connect, and every signal to the tracker.
    var handlers: SessionBusConnection.Handlers {
        SessionBusConnection.Handlers(
            matchRules: NotificationActionTracker.matchRules,
            connected: { [self] caller in
                let owner: String?
                do {
                    let names = try caller.call(
                        destination: NotificationActionTracker.busName, path: NotificationActionTracker.busPath,
                        interface: NotificationActionTracker.busName, member: "GetNameOwner"
                    ) { try $0.append(NotificationActionTracker.service) }.strings()
                    owner = names.count == 1 ? names[0] : nil
                } catch DBusFailure.errorReply {
                    owner = nil  // NameHasNoOwner: nothing runs yet (an activatable server starts on the first call)
                }
                tracker.withLock { $0.connected(owner: owner) }
            },
            received: { [self] signal in
                if let invocation = tracker.withLock({ $0.received(signal) }) { invocations.yield(invocation) }
            })
    }

    /// A notification was shown; see ``NotificationActionTracker/shown(id:replacing:tag:keys:server:)``.
    func shown(id: UInt32, replacing: UInt32, tag: String?, keys: [String], server: String?) {
        tracker.withLock { $0.shown(id: id, replacing: replacing, tag: tag, keys: keys, server: server) }
    }

    /// The unique name that owns the notification service, as far as this connection knows.
    var owner: String? { tracker.withLock { $0.owner } }

    /// How many notifications can be clicked now.
    var openCount: Int { tracker.withLock { $0.openCount } }
}
