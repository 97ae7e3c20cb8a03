/// One desktop notification, described independently of how it is shown.
///
/// Notifications with the same ``tag`` replace each other instead of piling up: a presenter that supports it updates
/// the one it showed before (CribCall tags by monitor, so each monitor has at most one notification on screen).
public struct DesktopNotification: Sendable, Hashable {
    /// The one-line title.
    public var summary: String
    /// The detail text (plain text; presenters escape it for servers that interpret markup).
    public var body: String
    /// How urgent it is; ``Urgency/critical`` notifications stay until dismissed on most servers.
    public var urgency: Urgency
    /// The freedesktop category hint, if any.
    public var category: Category?
    /// Notifications with equal non-nil tags replace each other.
    public var tag: String?
    /// A freedesktop icon name (or an absolute `file://` URI).
    public var icon: String
    /// When the server should close it by itself.
    public var expiration: Expiration
    /// The buttons offered on it, in order; at most ``maximumActions`` are shown, and only by servers that support
    /// actions. A click arrives as an ``Invocation`` from ``NotificationPresenter/actionInvocations()``.
    public var actions: [Action]

    /// How many ``actions`` a presenter sends; later ones are left out.
    public static let maximumActions = 3

    /// Creates a notification.
    ///
    /// - Parameters:
    ///   - summary: The one-line title.
    ///   - body: The detail text, plain text.
    ///   - urgency: How urgent it is.
    ///   - category: The freedesktop category hint.
    ///   - tag: Notifications with the same tag replace each other.
    ///   - icon: A freedesktop icon name.
    ///   - expiration: When the server should close it by itself.
    ///   - actions: The buttons offered on it (at most ``maximumActions`` are sent).
    public init(
        summary: String,
        body: String = "",
        urgency: Urgency = .normal,
        category: Category? = nil,
        tag: String? = nil,
        icon: String = "audio-input-microphone",
        expiration: Expiration = .serverDefault,
        actions: [Action] = []
    ) {
        self.summary = summary
        self.body = body
        self.urgency = urgency
        self.category = category
        self.tag = tag
        self.icon = icon
        self.expiration = expiration
        self.actions = actions
    }
}

extension DesktopNotification {
    /// The urgency levels of the freedesktop Desktop Notifications specification (the `urgency` hint, a byte).
    public enum Urgency: UInt8, Sendable, Hashable, CaseIterable {
        case low = 0
        case normal = 1
        case critical = 2
    }

    /// A freedesktop notification category (the `category` hint), e.g. `device.error`.
    public struct Category: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
        public var rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public init(stringLiteral value: String) {
            self.rawValue = value
        }

        /// A generic device-related notification.
        public static let device: Self = "device"
        /// A device had some kind of error.
        public static let deviceError: Self = "device.error"
        /// A network connection was established.
        public static let networkConnected: Self = "network.connected"
        /// A network connection was lost.
        public static let networkDisconnected: Self = "network.disconnected"
        /// A network connection had an error.
        public static let networkError: Self = "network.error"
        /// An instant message arrived.
        public static let imReceived: Self = "im.received"
    }

    /// A button on a notification (an action of the freedesktop specification).
    ///
    /// The key comes back in the ``Invocation`` when the user clicks the button; the label is what the button says.
    /// Both are sanitised and bounded to 64 bytes before they are sent; an action whose key is empty (or repeats an
    /// earlier key) is left out. By convention the key `default` is the click on the notification itself, and
    /// servers do not show its label.
    public struct Action: Sendable, Hashable {
        /// What identifies the action in an ``Invocation``, e.g. `okay`.
        public var key: String
        /// What the button says, e.g. `I'm on it`.
        public var label: String

        /// Creates an action.
        ///
        /// - Parameters:
        ///   - key: What identifies the action when it is invoked.
        ///   - label: What the button says.
        public init(key: String, label: String) {
            self.key = key
            self.label = label
        }
    }

    /// The user clicked an ``Action`` on a notification this presenter showed.
    public struct Invocation: Sendable, Hashable {
        /// The presenter's id of the notification (what ``NotificationPresenter/notify(_:)`` returned).
        public var notificationId: UInt32
        /// The ``DesktopNotification/tag`` of the notification, if it had one.
        public var tag: String?
        /// The ``Action/key`` of the action, as sent.
        public var key: String

        /// Creates an invocation.
        ///
        /// - Parameters:
        ///   - notificationId: The id of the notification.
        ///   - tag: Its tag, if it had one.
        ///   - key: The key of the action.
        public init(notificationId: UInt32, tag: String?, key: String) {
            self.notificationId = notificationId
            self.tag = tag
            self.key = key
        }
    }

    /// When the notification server closes a notification by itself.
    public enum Expiration: Sendable, Hashable {
        /// The server's own default.
        case serverDefault
        /// Only when the user dismisses it.
        case never
        /// After this long (clamped to 1 ms … 24 days).
        case after(Duration)

        /// The `expire_timeout` argument of `Notify`, in milliseconds (-1: server default, 0: never).
        var milliseconds: Int32 {
            switch self {
            case .serverDefault: return -1
            case .never: return 0
            case .after(let duration):
                let (seconds, attoseconds) = duration.components
                let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
                return Int32(min(max(milliseconds.rounded(.up), 1), Double(Int32.max)))
            }
        }
    }
}
