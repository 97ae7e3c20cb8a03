import CNetlink
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An rtnetlink socket (`AF_NETLINK`, `NETLINK_ROUTE`): owns the descriptor and closes it once. Sendable: the
/// descriptor never changes, and each call is one system call.
final class NetlinkSocket: Sendable {
    let descriptor: Int32

    /// Opens a socket, subscribed to `groups` (0: none, for requests only).
    init(groups: UInt32) throws(NetworkWatchError) {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard descriptor >= 0 else { throw Self.error("socket(AF_NETLINK)") }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = groups
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let error = Self.error("bind(AF_NETLINK, groups \(groups))")
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Sends one message.
    func send(_ message: [UInt8]) throws(NetworkWatchError) {
        let sent = message.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == message.count else { throw Self.error("send(netlink)") }
    }

    /// Receives one datagram (several messages), blocking.
    /// - Returns: The bytes, or nil when the kernel dropped messages for lack of buffer (`ENOBUFS`).
    func receive() throws(NetworkWatchError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return Array(buffer.prefix(count)) }
            if errno == EINTR { continue }
            if errno == ENOBUFS { return nil }
            throw Self.error("recv(netlink)")
        }
    }

    static func error(_ call: String) -> NetworkWatchError {
        NetworkWatchError("\(call) failed: \(String(cString: strerror(errno)))")
    }
}

/// One netlink message: its type and flags, and its payload (after the header).
struct NetlinkMessage {
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var payload: [UInt8]

    /// The messages in one datagram; a truncated one ends the list.
    static func split(_ datagram: [UInt8]) -> [NetlinkMessage] {
        var messages: [NetlinkMessage] = []
        let headerLength = Int(cnetlink_header_length())
        var offset = 0
        while offset + headerLength <= datagram.count {
            let header = datagram.load(nlmsghdr.self, at: offset)
            let length = Int(header.nlmsg_len)
            guard length >= headerLength, offset + length <= datagram.count else { break }
            messages.append(
                NetlinkMessage(
                    type: header.nlmsg_type, flags: header.nlmsg_flags, sequence: header.nlmsg_seq,
                    payload: Array(datagram[(offset + headerLength)..<(offset + length)])))
            offset += Int(cnetlink_align(UInt32(length)))
        }
        return messages
    }

    /// A dump request (`NLM_F_REQUEST | NLM_F_DUMP`) of `type` whose payload is `body`.
    static func dumpRequest<Body>(type: Int32, body: Body, sequence: UInt32) -> [UInt8] {
        var header = nlmsghdr()
        header.nlmsg_len = UInt32(Int(cnetlink_header_length()) + MemoryLayout<Body>.size)
        header.nlmsg_type = UInt16(type)
        header.nlmsg_flags = UInt16(NLM_F_REQUEST | NLM_F_DUMP)
        header.nlmsg_seq = sequence
        var bytes = withUnsafeBytes(of: header) { Array($0) }
        bytes += [UInt8](repeating: 0, count: Int(cnetlink_header_length()) - bytes.count)
        bytes += withUnsafeBytes(of: body) { Array($0) }
        return bytes
    }

    /// The route attributes (`rtattr`) that follow a fixed header of `headerSize` bytes: type → value.
    func attributes(after headerSize: Int) -> [(type: UInt16, value: [UInt8])] {
        var attributes: [(type: UInt16, value: [UInt8])] = []
        var offset = Int(cnetlink_align(UInt32(headerSize)))
        let attributeHeader = MemoryLayout<rtattr>.size
        while offset + attributeHeader <= payload.count {
            let attribute = payload.load(rtattr.self, at: offset)
            let length = Int(attribute.rta_len)
            guard length >= attributeHeader, offset + length <= payload.count else { break }
            attributes.append((attribute.rta_type, Array(payload[(offset + attributeHeader)..<(offset + length)])))
            offset += Int(cnetlink_rta_align(UInt32(length)))
        }
        return attributes
    }
}

extension [UInt8] {
    /// A C struct read from these bytes at `offset` (no alignment needed); the caller checked the length.
    func load<T>(_ type: T.Type, at offset: Int) -> T {
        withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
    }
}
