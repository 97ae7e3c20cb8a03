/// Decides which received signals are clicks on this notifier's notifications (pure: no I/O, no clocks).
///
/// A signal counts only when it comes from the connection that owns `org.freedesktop.Notifications` (the bus stamps
/// the sender; nobody else can claim that name) and names a notification this notifier showed, that is still open
/// and that offered the clicked key. The owner is what the bus said at connect (`GetNameOwner`) and then follows the
/// bus's own `NameOwnerChanged` signals, so a restarted notification server is heard again. Each notification
/// remembers the server that returned its id, so a new server reusing an old id cannot click an old notification.
struct NotificationActionTracker {
    /// How many notifications with actions are remembered at once; beyond it the oldest is forgotten (a server that
    /// never says `NotificationClosed` cannot make the set grow).
    static let maximumOpen = 256

    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let busName = "org.freedesktop.DBus"
    static let busPath = "/org/freedesktop/DBus"

    /// The match rules a connection needs: the notification interface's signals (unicast ones arrive without a
    /// rule, broadcast ones need it) and the bus's news about who owns the service.
    static let matchRules = [
        "type='signal',interface='\(service)'",
        "type='signal',sender='\(busName)',path='\(busPath)',interface='\(busName)',member='NameOwnerChanged',"
            + "arg0='\(service)'",
    ]

    private struct Entry {
        var server: String?
        var tag: String?
        var keys: [String]
        var order: UInt64
    }

    /// The unique name that owns the service, nil when nobody does.
    private(set) var owner: String?
    private var open: [UInt32: Entry] = [:]
    private var counter: UInt64 = 0

    /// How many notifications can be clicked now.
    var openCount: Int { open.count }

    /// A (new) connection to the bus: `owner` is what the bus answered to `GetNameOwner`. Everything shown through
    /// an earlier connection is forgotten.
    mutating func connected(owner: String?) {
        self.owner = owner
        open.removeAll()
    }

    /// A notification was shown.
    ///
    /// - Parameters:
    ///   - id: The id the server returned.
    ///   - replacing: The id it replaced (0: none); that one is forgotten.
    ///   - tag: Its tag.
    ///   - keys: The keys of the actions that were sent with it (none: it cannot be clicked).
    ///   - server: The unique name that answered `Notify` (nil: the current owner).
    mutating func shown(id: UInt32, replacing: UInt32, tag: String?, keys: [String], server: String?) {
        if replacing != 0 { open[replacing] = nil }
        open[id] = nil
        guard id != 0, !keys.isEmpty else { return }
        counter += 1
        open[id] = Entry(server: server ?? owner, tag: tag, keys: keys, order: counter)
        if open.count > Self.maximumOpen, let oldest = open.min(by: { $0.value.order < $1.value.order })?.key {
            open[oldest] = nil
        }
    }

    /// A signal arrived.
    ///
    /// - Parameter signal: Any signal the connection received.
    /// - Returns: The invocation it stands for, or nil when it is none (or must be ignored).
    mutating func received(_ signal: BusSignal) -> DesktopNotification.Invocation? {
        let arguments = signal.arguments ?? []
        if signal.sender == Self.busName, signal.path == Self.busPath, signal.interface == Self.busName,
            signal.member == "NameOwnerChanged", arguments.count == 3,
            case .string(let name) = arguments[0], case .string(let oldOwner) = arguments[1],
            case .string(let newOwner) = arguments[2], name == Self.service
        {
            owner = newOwner.isEmpty ? nil : newOwner
            if !oldOwner.isEmpty { open = open.filter { $0.value.server != oldOwner } }
            return nil
        }
        guard let sender = signal.sender, sender == owner, signal.path == Self.path,
            signal.interface == Self.service, arguments.count == 2, case .uint32(let id) = arguments[0]
        else { return nil }
        switch (signal.member, arguments[1]) {
        case ("ActionInvoked", .string(let key)):
            guard let entry = open[id], entry.server == sender, entry.keys.contains(key) else { return nil }
            return DesktopNotification.Invocation(notificationId: id, tag: entry.tag, key: key)
        case ("NotificationClosed", .uint32):
            if open[id]?.server == sender { open[id] = nil }
            return nil
        default:
            return nil
        }
    }
}
