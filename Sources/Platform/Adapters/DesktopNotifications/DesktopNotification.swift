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
    public init(
        summary: String,
        body: String = "",
        urgency: Urgency = .normal,
        category: Category? = nil,
        tag: String? = nil,
        icon: String = "audio-input-microphone",
        expiration: Expiration = .serverDefault
    ) {
        self.summary = summary
        self.body = body
        self.urgency = urgency
        self.category = category
        self.tag = tag
        self.icon = icon
        self.expiration = expiration
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
