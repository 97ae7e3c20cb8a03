/// The numbers of BEMYEARS-PROTOCOL.md, and the ICE servers handed to clients.
public struct SignalingConfiguration: Sendable, Hashable {
    /// Largest text frame, in bytes (65,536; larger → close 1009).
    public var maximumMessageBytes: Int
    /// Told to clients in REGISTERED as `heartbeatIntervalSec` (15 s).
    public var heartbeatInterval: Duration
    /// A session with no application message for this long is expired, close 4001 (20 s).
    public var presenceTTL: Duration
    /// Ring, answer and connect deadlines (10 s, 10 s, 20 s).
    public var callTimeouts: CallTimeouts
    /// REPORT_ABUSE is accepted this long after a call ended (5 min).
    public var abuseReportWindow: Duration
    /// Token bucket per session (50 messages/s, burst 100).
    public var rateLimit: RateLimit
    /// Messages waiting behind one that is still being handled, per session; beyond this → RATE_LIMITED.
    public var maximumQueuedMessages: Int
    /// STUN/TURN servers in REGISTERED's `iceServers`.
    public var iceServers: [ICEServer]
    /// How often the hub logs user statistics (seed §18.1: every 5 minutes).
    public var statisticsInterval: Duration
    /// How often ended calls older than ``abuseReportWindow`` are removed from the store.
    public var pruneInterval: Duration
    /// At most one PRESENCE per caller per this interval (100 ms, the protocol's bound): changes within it are
    /// coalesced into one PRESENCE sent when it has passed, so interpreters toggling state cannot multiply traffic
    /// by the number of callers. Zero: every change is sent at once.
    public var presenceInterval: Duration
    /// The longest interpreter list in a PRESENCE (1,000: the first in byte order; 1,000 entries of the longest
    /// name still fit the 64 KiB frame a client may insist on).
    public var maximumPresenceEntries: Int

    public init(
        maximumMessageBytes: Int = EnvelopeCodec.maximumFrameBytes,
        heartbeatInterval: Duration = .seconds(15),
        presenceTTL: Duration = .seconds(20),
        callTimeouts: CallTimeouts = CallTimeouts(),
        abuseReportWindow: Duration = .seconds(300),
        rateLimit: RateLimit = RateLimit(),
        maximumQueuedMessages: Int = 128,
        iceServers: [ICEServer] = [],
        statisticsInterval: Duration = .seconds(300),
        pruneInterval: Duration = .seconds(60),
        presenceInterval: Duration = .milliseconds(100),
        maximumPresenceEntries: Int = 1000
    ) {
        self.maximumMessageBytes = maximumMessageBytes
        self.heartbeatInterval = heartbeatInterval
        self.presenceTTL = presenceTTL
        self.callTimeouts = callTimeouts
        self.abuseReportWindow = abuseReportWindow
        self.rateLimit = rateLimit
        self.maximumQueuedMessages = maximumQueuedMessages
        self.iceServers = iceServers
        self.statisticsInterval = statisticsInterval
        self.pruneInterval = pruneInterval
        self.presenceInterval = presenceInterval
        self.maximumPresenceEntries = maximumPresenceEntries
    }

    /// The protocol's values, no ICE servers.
    public static let standard = SignalingConfiguration()
}
