import CDBus
import Dispatch
import Synchronization

/// Owns one private libdbus connection to a session bus and runs every libdbus call on its own serial queue.
///
/// libdbus calls block (connect, authenticate, wait for a reply), so none of them runs on the Swift concurrency
/// pool. ``perform(timeout:_:)`` returns to its caller within the time bound even when the call behind it is still
/// waiting for a hung bus or server; the queue then finishes that call (libdbus's own timeout is the same bound)
/// before it starts the next one.
///
/// Incoming messages are read without polling: a dispatch read source on the connection's socket, targeting the
/// same queue, reads what arrived without blocking (`dbus_connection_read_write(…, 0)`); messages that a blocking
/// call queued while it waited for its reply are taken after the call's `body`. Every signal goes to
/// ``Handlers/received``; other messages (method calls, replies that nobody waits for any more) are dropped.
///
/// `@unchecked Sendable`: `connection` and `reader` are only read and written by blocks running on the serial
/// `queue` (and by `deinit`, when no block can hold `self` any more), and `address` and `handlers` are immutable.
/// The connection is private (not shared with other libdbus users in the process) and never exits the process on
/// disconnect.
final class SessionBusConnection: @unchecked Sendable {
    /// What a connection does besides the calls made through ``SessionBusConnection/perform(timeout:_:)``.
    struct Handlers: Sendable {
        /// Match rules added on every new connection (without waiting for the bus's answer: the first call after
        /// them is only answered once the bus has added them).
        var matchRules: [String] = []
        /// Runs on the queue after every (re)connect, after the match rules are sent and before anything else uses
        /// the connection; when it throws, the new connection is closed and the call that opened it fails.
        var connected: @Sendable (BusCaller) throws -> Void = { _ in }
        /// Runs on the queue for every signal received, in the order of arrival.
        var received: @Sendable (BusSignal) -> Void = { _ in }
    }

    /// The D-Bus address it connects to.
    let address: String
    private let handlers: Handlers
    private let queue = DispatchQueue(label: "DesktopNotifications.SessionBusConnection")
    private var connection: OpaquePointer?  // DBusConnection*, only on `queue`
    private var reader: (any DispatchSourceRead)?  // watches `connection`'s socket, only on `queue`

    /// libdbus's thread support, set up once per process before the first connection.
    private static let threadsReady: Bool = dbus_threads_init_default() != 0

    init(address: String, handlers: Handlers = Handlers()) {
        self.address = address
        self.handlers = handlers
        _ = Self.threadsReady
    }

    deinit {
        // Every block on `queue` retains `self` (the read source only weakly), so nothing else can be using the
        // connection now.
        drop()
    }

    /// Runs `body` on the bus queue with a connected connection, (re)connecting first when needed.
    ///
    /// - Parameters:
    ///   - timeout: The bound for the whole operation, including waiting for earlier calls.
    ///   - body: The work; its calls get the time that is left.
    /// - Returns: What `body` returned.
    /// - Throws: ``DBusFailure``; `.timedOut` when the bound passed first, `CancellationError` when the task was
    ///   cancelled.
    func perform<T: Sendable>(
        timeout: Duration,
        _ body: @escaping @Sendable (BusCaller) throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        let completion = Completion<T>()
        queue.async {
            completion.resume(
                Result {
                    let caller = BusCaller(connection: try self.connected(deadline: deadline), deadline: deadline)
                    defer {
                        // After `body`, so that what it learnt from its replies (e.g. a new notification's id) is
                        // known before the messages that arrived meanwhile are handled.
                        self.deliverIncoming()
                        self.dropIfDisconnected()
                    }
                    return try body(caller)
                })
        }
        let nanoseconds = Self.nanoseconds(timeout)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            completion.resume(.failure(DBusFailure.timedOut))
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { completion.install($0) }
        } onCancel: {
            completion.resume(.failure(CancellationError()))
        }
    }

    /// The open connection; opens and sets up a new one when there is none or the old one was disconnected.
    private func connected(deadline: ContinuousClock.Instant) throws -> OpaquePointer {
        dispatchPrecondition(condition: .onQueue(queue))
        if let connection, dbus_connection_get_is_connected(connection) != 0 { return connection }
        dropIfDisconnected()
        guard ContinuousClock.now < deadline else { throw DBusFailure.timedOut }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let opened = dbus_connection_open_private(address, &error) else {
            throw DBusFailure.noBus("cannot reach the D-Bus session bus at \(address): \(error.text)")
        }
        dbus_connection_set_exit_on_disconnect(opened, 0)
        // Sends Hello and waits for the unique name (libdbus's default timeout; the caller's bound still holds).
        guard dbus_bus_register(opened, &error) != 0 else {
            Self.close(opened)
            throw DBusFailure.noBus("the D-Bus session bus at \(address) refused this client: \(error.text)")
        }
        // Without a DBusError libdbus only queues AddMatch; the bus handles it before any later call of ours.
        for rule in handlers.matchRules { dbus_bus_add_match(opened, rule, nil) }
        do {
            try handlers.connected(BusCaller(connection: opened, deadline: deadline))
        } catch {
            Self.close(opened)
            throw error
        }
        connection = opened
        startReading(opened)
        return opened
    }

    /// Watches the connection's socket and handles what arrives, on the queue.
    private func startReading(_ connection: OpaquePointer) {
        var descriptor: Int32 = -1
        guard dbus_connection_get_unix_fd(connection, &descriptor) != 0, descriptor >= 0 else { return }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            self?.readIncoming()
        }
        reader = source
        source.activate()
    }

    /// The socket is readable: read without blocking, handle every complete message, notice a disconnect.
    private func readIncoming() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection else { return }
        _ = dbus_connection_read_write(connection, 0)
        deliverIncoming()
        // A closed socket stays readable: stop watching it at once.
        dropIfDisconnected()
    }

    /// Hands every signal libdbus has queued to ``Handlers/received``, in order; drops everything else (late
    /// replies, and method calls: this connection serves none, and `Notify` callers never get calls).
    private func deliverIncoming() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection else { return }
        while let popped = dbus_connection_pop_message(connection) {
            if let signal = MessageReader(owning: popped).signal { handlers.received(signal) }
        }
    }

    private func dropIfDisconnected() {
        guard let connection, dbus_connection_get_is_connected(connection) == 0 else { return }
        drop()
    }

    /// Forgets the connection and closes it; with a read source, only once the source has stopped watching its
    /// socket (dispatch requires that a watched descriptor stays open until the cancel handler has run).
    private func drop() {
        guard let connection else { return }
        self.connection = nil
        if let reader {
            self.reader = nil
            let closing = ClosingConnection(connection)
            reader.setCancelHandler { Self.close(closing.connection) }
            reader.cancel()
        } else {
            Self.close(connection)
        }
    }

    private static func close(_ connection: OpaquePointer) {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    private static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
    }
}

/// A connection on its way to being closed, handed to a read source's cancel handler.
///
/// `@unchecked Sendable`: the pointer is used once, by the cancel handler on the connection's queue, after the
/// connection has been forgotten by everything else.
private struct ClosingConnection: @unchecked Sendable {
    let connection: OpaquePointer

    init(_ connection: OpaquePointer) {
        self.connection = connection
    }
}

/// Internal failures of a bus call; ``FreedesktopNotifier`` turns them into ``DesktopNotificationError``.
enum DBusFailure: Error, Equatable {
    /// The bus cannot be reached.
    case noBus(String)
    /// The time bound passed.
    case timedOut
    /// The peer answered with a D-Bus error.
    case errorReply(name: String, message: String)
    /// libdbus could not allocate.
    case outOfMemory
    /// The reply did not have the expected signature.
    case unexpectedReply(String)
}

/// Makes method calls on a connected bus; exists only inside a ``SessionBusConnection/perform(timeout:_:)`` block.
struct BusCaller {
    let connection: OpaquePointer
    let deadline: ContinuousClock.Instant

    /// Calls a method and waits for its reply, at most until the deadline.
    ///
    /// - Parameters:
    ///   - destination: The bus name, e.g. `org.freedesktop.Notifications`.
    ///   - path: The object path.
    ///   - interface: The interface.
    ///   - member: The method name.
    ///   - arguments: Appends the arguments.
    /// - Returns: The method return message.
    func call(
        destination: String, path: String, interface: String, member: String,
        arguments: (MessageWriter) throws -> Void = { _ in }
    ) throws -> MessageReader {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { throw DBusFailure.timedOut }
        let milliseconds = Int32(
            clamping: max(
                1,
                remaining.components.seconds * 1000
                    + remaining.components.attoseconds / 1_000_000_000_000_000))
        guard let message = dbus_message_new_method_call(destination, path, interface, member) else {
            throw DBusFailure.outOfMemory
        }
        defer { dbus_message_unref(message) }
        try MessageWriter.appending(to: message, arguments)
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        // Whatever else arrives meanwhile stays queued in libdbus; the connection handles it after the `perform`
        // block (SessionBusConnection.deliverIncoming).
        let reply = dbus_connection_send_with_reply_and_block(connection, message, milliseconds, &error)
        guard let reply else {
            let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            if name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Timeout"
                || name == "org.freedesktop.DBus.Error.TimedOut"
            {
                throw DBusFailure.timedOut
            }
            throw DBusFailure.errorReply(name: name, message: error.text)
        }
        return MessageReader(owning: reply)
    }
}

extension DBusError {
    /// The error's message, or its name when it has none.
    fileprivate var text: String {
        message.map { String(cString: $0) } ?? name.map { String(cString: $0) } ?? "unknown D-Bus error"
    }
}

/// Resumes a continuation exactly once, with whichever result comes first (reply, timeout or cancellation), even
/// when that result comes before the continuation is installed.
private final class Completion<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<T, any Error>)
        case early(Result<T, any Error>)
        case done
    }

    private let state = Mutex<State>(.idle)

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { state in
            if case .early(let result) = state {
                state = .done
                return result
            }
            state = .waiting(continuation)
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func resume(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .early(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .early, .done:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}
