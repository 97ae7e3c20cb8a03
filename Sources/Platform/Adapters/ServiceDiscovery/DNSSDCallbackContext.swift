import CDNSSD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A dns_sd callback, copied out of C memory into Swift values.
enum DNSSDReply {
    case registered(name: String, error: DNSServiceErrorType)
    case browsed(
        added: Bool, interfaceIndex: UInt32, error: DNSServiceErrorType, name: String, type: String, domain: String)
    case resolved(
        interfaceIndex: UInt32, error: DNSServiceErrorType, fullName: String, host: String, port: UInt16, txt: [UInt8])
    case record(
        added: Bool, interfaceIndex: UInt32, error: DNSServiceErrorType, fullName: String, type: UInt16, data: [UInt8])
    /// `DNSServiceProcessResult` failed: the connection to the daemon is gone.
    case failed(DNSSDCallError)
}

/// The Swift object behind a callback's `context` pointer. Every callback runs on the adapter's serial queue,
/// as does everything `handler` touches.
final class DNSSDCallbackContext {
    let handler: (DNSSDReply) -> Void

    init(_ handler: @escaping (DNSSDReply) -> Void) {
        self.handler = handler
    }

    func handle(_ reply: DNSSDReply) { handler(reply) }

    fileprivate static func deliver(_ context: UnsafeMutableRawPointer?, _ reply: DNSSDReply) {
        guard let context else { return }
        Unmanaged<DNSSDCallbackContext>.fromOpaque(context).takeUnretainedValue().handle(reply)
    }
}

/// The C function pointers handed to dns_sd. They copy their arguments and call the context.
enum DNSSDCallbacks {
    static let register: DNSServiceRegisterReply = { _, _, error, name, _, _, context in
        DNSSDCallbackContext.deliver(context, .registered(name: string(name), error: error))
    }

    static let browse: DNSServiceBrowseReply = { _, flags, interfaceIndex, error, name, type, domain, context in
        DNSSDCallbackContext.deliver(
            context,
            .browsed(
                added: flags & cdnssd_flags_add() != 0,
                interfaceIndex: interfaceIndex,
                error: error,
                name: string(name),
                type: string(type),
                domain: string(domain)
            )
        )
    }

    static let resolve: DNSServiceResolveReply = {
        _, _, interfaceIndex, error, fullName, host, port, txtLength, txt, context in
        DNSSDCallbackContext.deliver(
            context,
            .resolved(
                interfaceIndex: interfaceIndex,
                error: error,
                fullName: string(fullName),
                host: string(host),
                port: UInt16(bigEndian: port),
                txt: bytes(txt, Int(txtLength))
            )
        )
    }

    static let queryRecord: DNSServiceQueryRecordReply = {
        _, flags, interfaceIndex, error, fullName, type, _, length, data, _, context in
        DNSSDCallbackContext.deliver(
            context,
            .record(
                added: flags & cdnssd_flags_add() != 0,
                interfaceIndex: interfaceIndex,
                error: error,
                fullName: string(fullName),
                type: type,
                data: bytes(data, Int(length))
            )
        )
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    private static func bytes(_ pointer: UnsafeRawPointer?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// Address literals from A/AAAA record data.
enum AddressRecord {
    static let typeA: UInt16 = 1
    static let typeAAAA: UInt16 = 28
    static let typeTXT: UInt16 = 16

    /// The literal for 4-byte (A) or 16-byte (AAAA) record data; link-local IPv6 gets `%interface`.
    static func literal(_ data: [UInt8], interfaceIndex: UInt32) -> String? {
        switch data.count {
        case 4:
            return data.map(String.init).joined(separator: ".")
        case 16:
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let ok = data.withUnsafeBytes { inet_ntop(AF_INET6, $0.baseAddress, &text, socklen_t(text.count)) != nil }
            guard ok else { return nil }
            var literal = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if data[0] == 0xFE, data[1] & 0xC0 == 0x80, interfaceIndex != 0 {
                var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
                if if_indextoname(interfaceIndex, &name) != nil {
                    literal +=
                        "%" + String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                }
            }
            return literal
        default:
            return nil
        }
    }
}
