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

    public init() {}
}

extension Duration {
    /// Nanoseconds, as ngtcp2 counts durations.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }
}
