import CNetlink

#if canImport(Glibc)
    import Glibc
#endif

/// What the kernel's routing table and links say about reaching the internet: online when a default route exists
/// (IPv4 or IPv6, unicast, in any table but `local`) whose outgoing link is up and running and not marked
/// link-down.
struct RoutingTable: Sendable, Hashable {
    struct DefaultRoute: Sendable, Hashable {
        /// The interfaces it leaves by (one, or several for a multipath route).
        var interfaces: [Int32]
        /// The kernel marked it unusable (RTNH_F_LINKDOWN / RTNH_F_DEAD).
        var linkDown: Bool
    }

    struct Link: Sendable, Hashable {
        var index: Int32
        var up: Bool
        var loopback: Bool
    }

    var defaultRoutes: [DefaultRoute]
    var links: [Link]

    var isOnline: Bool {
        let usable = Set(links.filter { $0.up && !$0.loopback }.map(\.index))
        return defaultRoutes.contains { route in !route.linkDown && route.interfaces.contains(where: usable.contains) }
    }

    /// Reads both tables with two dump requests on a fresh socket.
    static func read() throws(NetworkWatchError) -> RoutingTable {
        let socket = try NetlinkSocket(groups: 0)
        var routeRequest = rtmsg()
        routeRequest.rtm_family = UInt8(AF_UNSPEC)
        let routes = try dump(
            socket, NetlinkMessage.dumpRequest(type: Int32(RTM_GETROUTE), body: routeRequest, sequence: 1))
        var linkRequest = ifinfomsg()
        linkRequest.ifi_family = UInt8(AF_UNSPEC)
        let links = try dump(
            socket, NetlinkMessage.dumpRequest(type: Int32(RTM_GETLINK), body: linkRequest, sequence: 2))
        return RoutingTable(
            defaultRoutes: routes.compactMap(defaultRoute), links: links.compactMap(link))
    }

    private static func dump(_ socket: NetlinkSocket, _ request: [UInt8]) throws(NetworkWatchError)
        -> [NetlinkMessage]
    {
        try socket.send(request)
        var messages: [NetlinkMessage] = []
        while true {
            guard let datagram = try socket.receive() else {
                throw NetworkWatchError("the kernel dropped part of a routing table dump")
            }
            for message in NetlinkMessage.split(datagram) {
                switch Int(message.type) {
                case Int(NLMSG_DONE): return messages
                case Int(NLMSG_ERROR):
                    let code = message.payload.count >= 4 ? -message.payload.load(Int32.self, at: 0) : EIO
                    guard code != 0 else { continue }
                    throw NetworkWatchError("a netlink dump failed: \(String(cString: strerror(code)))")
                default: messages.append(message)
                }
            }
        }
    }

    private static func defaultRoute(_ message: NetlinkMessage) -> DefaultRoute? {
        guard Int(message.type) == RTM_NEWROUTE, message.payload.count >= MemoryLayout<rtmsg>.size else {
            return nil
        }
        let route = message.payload.load(rtmsg.self, at: 0)
        var table = UInt32(route.rtm_table)
        var interfaces: [Int32] = []
        var linkDown = route.rtm_flags & UInt32(RTNH_F_LINKDOWN | RTNH_F_DEAD) != 0
        for attribute in message.attributes(after: MemoryLayout<rtmsg>.size) {
            switch Int32(attribute.type) {
            case Int32(RTA_TABLE.rawValue) where attribute.value.count >= 4:
                table = attribute.value.load(UInt32.self, at: 0)
            case Int32(RTA_OIF.rawValue) where attribute.value.count >= 4:
                interfaces.append(attribute.value.load(Int32.self, at: 0))
            case Int32(RTA_MULTIPATH.rawValue):
                let hops = nextHops(attribute.value)
                interfaces += hops.filter { !$0.down }.map(\.interface)
                if !hops.isEmpty && hops.allSatisfy(\.down) { linkDown = true }
            default: break
            }
        }
        guard route.rtm_dst_len == 0, route.rtm_type == UInt8(RTN_UNICAST), table != UInt32(RT_TABLE_LOCAL.rawValue)
        else { return nil }
        return DefaultRoute(interfaces: interfaces, linkDown: linkDown)
    }

    private static func nextHops(_ bytes: [UInt8]) -> [(interface: Int32, down: Bool)] {
        var hops: [(interface: Int32, down: Bool)] = []
        var offset = 0
        while offset + MemoryLayout<rtnexthop>.size <= bytes.count {
            let hop = bytes.load(rtnexthop.self, at: offset)
            guard hop.rtnh_len >= UInt16(MemoryLayout<rtnexthop>.size) else { break }
            hops.append((hop.rtnh_ifindex, hop.rtnh_flags & UInt8(RTNH_F_LINKDOWN | RTNH_F_DEAD) != 0))
            offset += Int(cnetlink_rta_align(UInt32(hop.rtnh_len)))
        }
        return hops
    }

    private static func link(_ message: NetlinkMessage) -> Link? {
        guard Int(message.type) == RTM_NEWLINK, message.payload.count >= MemoryLayout<ifinfomsg>.size else {
            return nil
        }
        let info = message.payload.load(ifinfomsg.self, at: 0)
        let running = UInt32(IFF_UP) | UInt32(IFF_RUNNING)
        return Link(
            index: info.ifi_index, up: info.ifi_flags & running == running,
            loopback: info.ifi_flags & UInt32(IFF_LOOPBACK) != 0)
    }
}
