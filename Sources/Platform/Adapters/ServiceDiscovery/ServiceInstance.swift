/// A service instance a browser has resolved: its name under one service type on one network interface, with its
/// port, TXT record and addresses as currently announced.
public struct ServiceInstance: Sendable, Hashable {
    /// Which instance: the same name under another type, or seen on another interface, is another instance.
    public struct ID: Sendable, Hashable, Comparable {
        /// The service type browsed, e.g. `_http._tcp`.
        public var type: String
        /// The instance name.
        public var name: String
        /// The network interface it was seen on (0 when unknown, as in ``InMemoryServiceDiscovery``).
        public var interfaceIndex: UInt32

        /// Creates an instance identifier.
        public init(type: String, name: String, interfaceIndex: UInt32) {
            self.type = type
            self.name = name
            self.interfaceIndex = interfaceIndex
        }

        public static func < (lhs: ID, rhs: ID) -> Bool {
            (lhs.type, lhs.name, lhs.interfaceIndex) < (rhs.type, rhs.name, rhs.interfaceIndex)
        }
    }

    /// Which instance this is.
    public var id: ID
    /// The port from its SRV record.
    public var port: Int
    /// Its TXT record; empty when it has none or the announced one is malformed.
    public var txt: TXTRecord
    /// IPv4/IPv6 literals of its host from A/AAAA records, sorted; IPv6 link-local ones carry `%interface`. Empty
    /// until the first address record arrives.
    public var addresses: [String]

    /// Creates an instance.
    public init(id: ID, port: Int, txt: TXTRecord, addresses: [String]) {
        self.id = id
        self.port = port
        self.txt = txt
        self.addresses = addresses
    }
}
