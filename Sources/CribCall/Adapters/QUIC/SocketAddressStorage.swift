import CNGTCP2
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A socket address at a stable heap address, for ngtcp2 paths (which hold `sockaddr` pointers).
final class SocketAddressStorage {
    let pointer: UnsafeMutablePointer<sockaddr_storage>
    let length: socklen_t
    let address: SocketAddress

    init(_ address: SocketAddress) throws {
        self.address = address
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: sockaddr_storage())
        switch address {
        case .v4(let v4):
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee = v4.address }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        case .v6(let v6):
            pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee = v6.address }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        default:
            pointer.deallocate()
            throw QUICError.ngtcp2("QUIC needs an IP address, not \(address)", NGTCP2_ERR_INVALID_ARGUMENT)
        }
    }

    var sockaddr: UnsafeMutablePointer<sockaddr> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: CNGTCP2.sockaddr.self)
    }

    /// The ngtcp2 form of this address.
    var ngtcp2Address: ngtcp2_addr {
        ngtcp2_addr(addr: sockaddr, addrlen: ngtcp2_socklen(length))
    }

    deinit {
        pointer.deallocate()
    }
}
