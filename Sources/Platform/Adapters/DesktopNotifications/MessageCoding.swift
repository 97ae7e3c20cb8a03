import CDBus

/// Appends arguments to a D-Bus message with libdbus's iterator API (never the variadic `dbus_message_append_args`).
///
/// Iterators live in heap memory that does not move while libdbus uses them. Every string passes a UTF-8 check
/// first, because libdbus aborts the process on an invalid one.
struct MessageWriter {
    private let iterator: UnsafeMutablePointer<DBusMessageIter>

    private init(iterator: UnsafeMutablePointer<DBusMessageIter>) {
        self.iterator = iterator
    }

    /// Runs `body` with a writer appending to `message`'s arguments.
    static func appending(to message: OpaquePointer, _ body: (MessageWriter) throws -> Void) throws {
        let iterator = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
        iterator.initialize(to: DBusMessageIter())
        defer { iterator.deallocate() }
        dbus_message_iter_init_append(message, iterator)
        try body(MessageWriter(iterator: iterator))
    }

    /// Appends a string (`s`); text libdbus would reject is reduced to printable ASCII.
    func append(_ value: String) throws {
        let text = Self.isValid(value) ? value : NotificationText.asciiOnly(value)
        let ok = text.withCString { pointer in
            var argument: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(iterator, cdbus_type_string(), &argument)
        }
        guard ok != 0 else { throw DBusFailure.outOfMemory }
    }

    /// Appends a `u`.
    func append(_ value: UInt32) throws {
        var argument = value
        guard dbus_message_iter_append_basic(iterator, cdbus_type_uint32(), &argument) != 0 else {
            throw DBusFailure.outOfMemory
        }
    }

    /// Appends an `i`.
    func append(_ value: Int32) throws {
        var argument = value
        guard dbus_message_iter_append_basic(iterator, cdbus_type_int32(), &argument) != 0 else {
            throw DBusFailure.outOfMemory
        }
    }

    /// Appends a `y`.
    func append(_ value: UInt8) throws {
        var argument = value
        guard dbus_message_iter_append_basic(iterator, cdbus_type_byte(), &argument) != 0 else {
            throw DBusFailure.outOfMemory
        }
    }

    /// Appends an array (`a` + `elementSignature`) whose elements `body` appends.
    func appendArray(of elementSignature: String, _ body: (MessageWriter) throws -> Void) throws {
        try container(cdbus_type_array(), signature: elementSignature, body)
    }

    /// Appends a dict entry (`{…}`) inside an `a{…}` array.
    func appendDictEntry(_ body: (MessageWriter) throws -> Void) throws {
        try container(cdbus_type_dict_entry(), signature: nil, body)
    }

    /// Appends a variant holding one value of `signature`.
    func appendVariant(_ signature: String, _ body: (MessageWriter) throws -> Void) throws {
        try container(cdbus_type_variant(), signature: signature, body)
    }

    private func container(_ type: Int32, signature: String?, _ body: (MessageWriter) throws -> Void) throws {
        let sub = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
        sub.initialize(to: DBusMessageIter())
        defer { sub.deallocate() }
        let opened: dbus_bool_t =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(iterator, type, $0, sub) }
            } else {
                dbus_message_iter_open_container(iterator, type, nil, sub)
            }
        guard opened != 0 else { throw DBusFailure.outOfMemory }
        do {
            try body(MessageWriter(iterator: sub))
        } catch {
            dbus_message_iter_abandon_container(iterator, sub)
            throw error
        }
        guard dbus_message_iter_close_container(iterator, sub) != 0 else { throw DBusFailure.outOfMemory }
    }

    /// Whether libdbus accepts `value` as a string: valid UTF-8, no NUL.
    static func isValid(_ value: String) -> Bool {
        guard !value.utf8.contains(0) else { return false }
        return value.withCString { dbus_validate_utf8($0, nil) != 0 }
    }
}

/// Reads a received message (a reply, or a signal); owns (and releases) the message.
final class MessageReader {
    private let message: OpaquePointer

    init(owning message: OpaquePointer) {
        self.message = message
    }

    deinit {
        dbus_message_unref(message)
    }

    /// The message's signature, e.g. `u` or `ssss`.
    var signature: String {
        dbus_message_get_signature(message).map { String(cString: $0) } ?? ""
    }

    /// The unique name of the connection that sent it, as the bus stamped it (nil on a connection without a bus).
    var sender: String? { dbus_message_get_sender(message).map { String(cString: $0) } }

    /// Whether it is a signal.
    var isSignal: Bool { dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL }

    /// The signal, when the message is one; its arguments are read only when there are at most
    /// ``BusSignal/maximumArguments``.
    var signal: BusSignal? {
        guard isSignal else { return nil }
        return BusSignal(
            sender: sender,
            path: dbus_message_get_path(message).map { String(cString: $0) },
            interface: dbus_message_get_interface(message).map { String(cString: $0) },
            member: dbus_message_get_member(message).map { String(cString: $0) },
            arguments: signature.utf8.count <= BusSignal.maximumArguments ? basicArguments() : nil)
    }

    /// All arguments, when each is a `u` or an `s`; nil when any has another type.
    func basicArguments() -> [MessageArgument]? {
        guard signature.allSatisfy({ $0 == "u" || $0 == "s" }) else { return nil }
        var values: [MessageArgument] = []
        withIterator { iterator in
            repeat {
                switch dbus_message_iter_get_arg_type(iterator) {
                case cdbus_type_uint32():
                    var value: UInt32 = 0
                    dbus_message_iter_get_basic(iterator, &value)
                    values.append(.uint32(value))
                case cdbus_type_string():
                    values.append(.string(Self.string(at: iterator)))
                default:
                    return
                }
            } while dbus_message_iter_next(iterator) != 0
        }
        return values
    }

    /// The single `u` argument.
    func uint32() throws -> UInt32 {
        guard signature == "u" else { throw DBusFailure.unexpectedReply("expected (u), got (\(signature))") }
        var value: UInt32 = 0
        withIterator { iterator in dbus_message_iter_get_basic(iterator, &value) }
        return value
    }

    /// All arguments when they are all strings (`s…`).
    func strings() throws -> [String] {
        guard signature.allSatisfy({ $0 == "s" }) else {
            throw DBusFailure.unexpectedReply("expected strings, got (\(signature))")
        }
        var values: [String] = []
        withIterator { iterator in
            guard dbus_message_iter_get_arg_type(iterator) == cdbus_type_string() else { return }
            repeat {
                values.append(Self.string(at: iterator))
            } while dbus_message_iter_next(iterator) != 0
        }
        return values
    }

    /// The single `as` argument.
    func stringArray() throws -> [String] {
        guard signature == "as" else { throw DBusFailure.unexpectedReply("expected (as), got (\(signature))") }
        var values: [String] = []
        withIterator { iterator in
            let element = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
            element.initialize(to: DBusMessageIter())
            defer { element.deallocate() }
            dbus_message_iter_recurse(iterator, element)
            while dbus_message_iter_get_arg_type(element) == cdbus_type_string() {
                values.append(Self.string(at: element))
                dbus_message_iter_next(element)
            }
        }
        return values
    }

    private func withIterator(_ body: (UnsafeMutablePointer<DBusMessageIter>) -> Void) {
        let iterator = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
        iterator.initialize(to: DBusMessageIter())
        defer { iterator.deallocate() }
        guard dbus_message_iter_init(message, iterator) != 0 else { return }
        body(iterator)
    }

    private static func string(at iterator: UnsafeMutablePointer<DBusMessageIter>) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }
}

/// One argument of a received message, of the types this module reads.
enum MessageArgument: Sendable, Hashable {
    case uint32(UInt32)
    case string(String)
}

/// A received signal, copied out of its libdbus message.
struct BusSignal: Sendable, Hashable {
    /// The most arguments read from a signal (the ones read here have 2 or 3); a longer one has `arguments` nil.
    static let maximumArguments = 3

    /// The unique name of the sending connection, as the bus stamped it; `org.freedesktop.DBus` for the bus itself.
    var sender: String?
    /// The object path it was emitted from.
    var path: String?
    /// Its interface.
    var interface: String?
    /// Its name.
    var member: String?
    /// Its arguments, when all are `u` or `s` and there are at most ``maximumArguments`` (nil otherwise).
    var arguments: [MessageArgument]?
}
