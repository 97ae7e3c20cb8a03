/// How connections from devices that are not paired are reported: the first of a burst at once (someone may be
/// pairing), the rest of the burst counted and summed up in one line when its window has passed. A flood of
/// strangers — a port scan, an attempt to exhaust the connection slots — is then a few lines on the parent's
/// terminal, not thousands; each stranger's disconnection is reported only if its connection was.
struct StrangerLog {
    let window: Duration
    private var windowStart: ContinuousClock.Instant?
    /// Strangers connected in the current window after the first (not reported one by one).
    private(set) var counted = 0

    init(window: Duration) {
        self.window = window
    }

    /// A stranger connected at `now`. Returns true when it is reported on its own: the first of a window. Call
    /// ``summary(at:)`` first, so that a window that has passed is summed up before a new one starts.
    mutating func connected(at now: ContinuousClock.Instant) -> Bool {
        if let start = windowStart, now - start < window {
            counted += 1
            return false
        }
        windowStart = now
        counted = 0
        return true
    }

    /// The strangers counted in a window that has passed by `now` (forgotten once returned), or nil.
    mutating func summary(at now: ContinuousClock.Instant) -> Int? {
        guard let start = windowStart, now - start >= window, counted > 0 else { return nil }
        defer { counted = 0 }
        return counted
    }

    /// When the current window ends (nil before the first stranger).
    var windowEnd: ContinuousClock.Instant? { windowStart.map { $0 + window } }
}
