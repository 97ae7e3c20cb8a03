/// An in-memory ``NotificationPresenter`` for tests of the services that notify: it records what it is asked to show
/// and assigns ids the way a freedesktop server does (a tagged notification keeps the id of the one it replaces).
///
/// It plays a server with the `actions` capability: ``click(key:tag:)`` plays the user clicking a button, and the
/// invocation goes to every stream of ``actionInvocations()``.
public actor RecordingNotificationPresenter: NotificationPresenter {
    /// One notification as shown.
    public struct Shown: Sendable, Hashable {
        /// The id it was given.
        public var id: UInt32
        /// The id it replaced (0: none).
        public var replacesID: UInt32
        /// What was shown.
        public var notification: DesktopNotification
    }

    /// Everything shown so far, in order.
    public private(set) var shown: [Shown] = []
    private var idsByTag: [String: UInt32] = [:]
    private var nextID: UInt32 = 1
    private let invocations = InvocationBroadcaster()

    public init() {}

    deinit {
        invocations.finish()
    }

    @discardableResult
    public func notify(_ notification: DesktopNotification) async throws -> UInt32 {
        let replaces = notification.tag.flatMap { idsByTag[$0] } ?? 0
        let id: UInt32
        if replaces != 0 {
            id = replaces
        } else {
            id = nextID
            nextID += 1
        }
        if let tag = notification.tag { idsByTag[tag] = id }
        shown.append(Shown(id: id, replacesID: replaces, notification: notification))
        return id
    }

    public nonisolated func actionInvocations() -> AsyncStream<DesktopNotification.Invocation> {
        invocations.stream()
    }

    /// Plays the user clicking the button `key` on a notification on screen: the one shown last with `tag`, or the
    /// one shown last of all when `tag` is nil.
    ///
    /// The notification must offer `key` among the actions a real presenter would send (sanitised, bounded, at most
    /// ``DesktopNotification/maximumActions``), as a server only shows those buttons.
    ///
    /// - Parameters:
    ///   - key: The ``DesktopNotification/Action/key`` clicked.
    ///   - tag: The tag of the notification clicked (nil: the latest notification).
    /// - Returns: The invocation given to every stream, or nil when no such notification offers `key` (then nothing
    ///   is yielded).
    @discardableResult
    public func click(key: String, tag: String? = nil) -> DesktopNotification.Invocation? {
        let target = if let tag { shown.last { $0.notification.tag == tag } } else { shown.last }
        guard let target, NotificationText.actions(target.notification.actions).contains(where: { $0.key == key })
        else { return nil }
        let invocation = DesktopNotification.Invocation(
            notificationId: target.id, tag: target.notification.tag, key: key)
        invocations.yield(invocation)
        return invocation
    }
}
