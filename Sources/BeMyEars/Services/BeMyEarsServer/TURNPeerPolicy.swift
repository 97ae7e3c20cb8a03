import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which peers a TURN server started by ``LocalTURNServer`` may relay to: none in private, loopback, link-local or
/// other special-purpose ranges (a client could otherwise reach this machine's and this network's services through
/// the relay), except the ranges the operator names (`--turn-allow-peer`) and, for a server on loopback, 127.0.0.1
/// (both browsers of a one-machine demo).
///
/// Written as coturn's `denied-peer-ip` / `allowed-peer-ip` lines; coturn lets an allowed range override a denied one.
public struct TURNPeerPolicy: Sendable, Hashable {
    /// The special-purpose ranges relayed to never (IANA's IPv4/IPv6 special-purpose registries, the ones a
    /// relay could reach on a home network or this host).
    static let deniedRanges = [
        "0.0.0.0-0.255.255.255",  // "this network"
        "10.0.0.0-10.255.255.255",  // private
        "100.64.0.0-100.127.255.255",  // carrier-grade NAT
        "127.0.0.0-127.255.255.255",  // loopback
        "169.254.0.0-169.254.255.255",  // link-local
        "172.16.0.0-172.31.255.255",  // private
        "192.0.0.0-192.0.0.255",  // IETF protocol assignments
        "192.168.0.0-192.168.255.255",  // private
        "198.18.0.0-198.19.255.255",  // benchmarking
        "240.0.0.0-255.255.255.255",  // reserved, broadcast
        "::1",  // loopback (coturn reads "::" and ranges from it as covering IPv4 too)
        "::ffff:0.0.0.0-::ffff:255.255.255.255",  // IPv4-mapped
        "64:ff9b::-64:ff9b::ffff:ffff",  // NAT64
        "fc00::-fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",  // unique local
        "fe80::-febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",  // link-local
    ]

    /// Ranges allowed despite ``deniedRanges``, as coturn writes them (`first-last` or one address).
    public private(set) var allowedRanges: [String]

    /// - Parameters:
    ///   - allowedPeers: Addresses or CIDR ranges (`192.168.1.0/24`, `fd00::/8`, `10.0.0.7`) to relay to anyway.
    ///   - loopback: The TURN server listens on loopback: allow 127.0.0.1 and ::1 (and coturn's loopback switch).
    /// - Throws: ``ServerOptions/Invalid`` for an entry that is not an address or CIDR range.
    public init(allowing allowedPeers: [String], loopback: Bool) throws(ServerOptions.Invalid) {
        var ranges: [String] = []
        for peer in allowedPeers {
            guard let range = Self.range(peer) else {
                throw ServerOptions.Invalid(
                    description: "--turn-allow-peer \(peer.prefix(60)) is not an IP address or a CIDR range "
                        + "(e.g. 192.168.1.0/24 or fd00::/8)")
            }
            ranges.append(range)
        }
        if loopback { ranges += ["127.0.0.1", "::1"] }
        self.allowedRanges = ranges
        self.allowsLoopback = loopback
    }

    /// Whether coturn's `allow-loopback-peers` is on (a server on loopback).
    public let allowsLoopback: Bool

    /// The coturn configuration lines.
    var configurationLines: [String] {
        Self.deniedRanges.map { "denied-peer-ip=\($0)" } + allowedRanges.map { "allowed-peer-ip=\($0)" }
            + (allowsLoopback ? ["allow-loopback-peers"] : [])
    }

    /// `a.b.c.d/n`, an IPv6 CIDR or one address → coturn's `first-last` (or the address alone).
    static func range(_ text: String) -> String? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let (bytes, family) = Self.parse(String(parts[0])) else { return nil }
        guard parts.count == 2 else { return Self.format(bytes, family: family) }
        guard let prefix = Int(parts[1]), (0...(bytes.count * 8)).contains(prefix) else { return nil }
        var first = bytes
        var last = bytes
        for index in bytes.indices {
            let kept = min(max(prefix - index * 8, 0), 8)
            let mask: UInt8 = kept == 0 ? 0 : ~UInt8(0) << (8 - kept)
            first[index] &= mask
            last[index] |= ~mask
        }
        guard let low = Self.format(first, family: family), let high = Self.format(last, family: family) else {
            return nil
        }
        return low == high ? low : "\(low)-\(high)"
    }

    private static func parse(_ text: String) -> ([UInt8], Int32)? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return (v4, AF_INET) }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, text, &v6) == 1 { return (v6, AF_INET6) }
        return nil
    }

    private static func format(_ bytes: [UInt8], family: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, bytes, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
