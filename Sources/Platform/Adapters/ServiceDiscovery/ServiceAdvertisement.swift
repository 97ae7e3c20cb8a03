/// A service to publish on the LAN: one instance name under one or more service types, on one port, with one TXT
/// record (the same for every type).
public struct ServiceAdvertisement: Sendable, Hashable {
    /// The instance name people see (1–63 bytes of UTF-8), e.g. `Nursery`.
    public var name: String
    /// The service types, e.g. `["_http._tcp"]`; each is registered in `local.`.
    public var types: [String]
    /// The port the service listens on.
    public var port: Int
    /// The TXT record.
    public var txt: TXTRecord

    /// Creates an advertisement.
    public init(name: String, types: [String], port: Int, txt: TXTRecord = TXTRecord()) {
        self.name = name
        self.types = types
        self.port = port
        self.txt = txt
    }

    /// Checks what DNS-SD can publish and encodes the TXT record.
    ///
    /// - Returns: The TXT wire bytes.
    /// - Throws: ``ServiceDiscoveryError/Code/invalidAdvertisement`` for a bad port, instance name, type list or
    ///   TXT entry, saying what to change.
    func validatedTXT() throws(ServiceDiscoveryError) -> [UInt8] {
        guard (1...65_535).contains(port) else {
            throw ServiceDiscoveryError(
                code: .invalidAdvertisement, message: "port \(port) is not a valid port: use 1...65535")
        }
        guard !name.isEmpty, name.utf8.count <= 63 else {
            throw ServiceDiscoveryError(
                code: .invalidAdvertisement, message: "the instance name must be 1 to 63 bytes: shorten it")
        }
        guard !types.isEmpty, Set(types).count == types.count else {
            throw ServiceDiscoveryError(
                code: .invalidAdvertisement, message: "give each service type once, and at least one: \(types)")
        }
        return try txt.encoded()
    }
}
