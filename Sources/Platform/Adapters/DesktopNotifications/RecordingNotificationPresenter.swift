/// An in-memory ``NotificationPresenter`` for tests of the services that notify: it records what it is asked to show
/// and assigns ids the way a freedesktop server does (a tagged notification keeps the id of the one it replaces).
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

    public init() {}

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
}
