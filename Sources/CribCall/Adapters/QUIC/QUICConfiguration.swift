public import Logging

/// Transport settings of a CribCall QUIC endpoint, tuned for a home LAN (PROTOCOL.md §2).
public struct QUICConfiguration: Sendable {
    /// The ALPN both sides must agree on; a ClientHello without it, or with another, is refused.
    public var alpn = "cribcall/1"
    /// Initial RTT estimate. ngtcp2's default (333 ms) is for the internet; a LAN answers in a few ms.
    public var initialRTT: Duration = .milliseconds(10)
    /// Give up a handshake after this long.
    public var handshakeTimeout: Duration = .seconds(5)
    /// Close after this long without packets (the listener pings every 5 s).
    public var idleTimeout: Duration = .seconds(30)
    /// Stop accepting new connections beyond this many (a monitor has a handful of listeners).
    public var maxConnections = 256
    /// Who gets the monitor's connection slots when someone on the LAN tries to take them all.
    public var admission = QUICAdmission()
    /// Suspend `send` while more than this many bytes are unacknowledged.
    public var sendHighWatermark = 1 << 20
    /// Resume suspended senders once unacknowledged bytes drop to this.
    public var sendLowWatermark = 256 << 10
    /// Flow-control window of the control stream (and of the connection).
    public var streamWindow = 1 << 20
    /// How long `close` waits for sent frames to be acknowledged before closing anyway.
    public var closeFlushTimeout: Duration = .seconds(1)
    /// ngtcp2's own log on stderr (debugging only: it prints packet details, never keys).
    public var ngtcp2Log = false
    /// Where the endpoint says what it did that nobody else sees (debug: a stranger's Initial dropped or a
    /// connection closed to make room, a connection that could not be created). The program's logger, with its
    /// metadata.
    public var logger = Logger(label: "cribcall")

    public init() {}
}

/// How a monitor keeps slots for the listeners it trusts while strangers (pairing devices, or an attacker on the
/// LAN with throwaway certificates) connect. A connection counts as *untrusted* from its first packet until the
/// service says its peer is trusted (``ControlConnection/markTrusted()``).
public struct QUICAdmission: Sendable, Hashable {
    /// Untrusted connections at most; at the limit the oldest is closed to make room for the newcomer (an
    /// established one before one still in its handshake), so a trusted listener reconnecting always gets in, and
    /// trusted connections are never closed for strangers.
    public var maxUntrusted = 64
    /// Established untrusted connections one IP address may hold; its further Initials are dropped.
    public var maxUntrustedPerAddress = 8
    /// With this many untrusted connections, a new client must first prove its address with a QUIC Retry
    /// (RFC 9000 §8.1.2), so spoofed Initials cannot take slots. 0: always.
    public var retryThreshold = 8
    /// How long a Retry token stays valid.
    public var retryTokenLifetime: Duration = .seconds(10)

    public init() {}
}

/// Counts of what a monitor's admission did since it started.
public struct QUICAdmissionStatistics: Sendable, Hashable {
    /// Retry packets sent (new clients asked to prove their address).
    public var retries = 0
    /// Initials closed for a Retry token that was not ours, too old, or for another address.
    public var invalidTokens = 0
    /// Initials dropped because their address already held its untrusted connections.
    public var droppedForAddress = 0
    /// Untrusted connections closed to make room for a newcomer.
    public var evicted = 0

    public init() {}
}

extension Duration {
    /// Nanoseconds, as ngtcp2 counts durations.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }
}
