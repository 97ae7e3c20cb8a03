/// Decides when an `audio_video` sender drops its video to the weak-link format (480p, lower bitrate) and when it
/// goes back to the configured one, from what the receiver reports about the video it gets (the loss in its RTCP
/// reports, ``VideoReceiverReports``; the round trip from webrtcbin's `remote-inbound-rtp` statistics).
///
/// A pure state machine: each report goes in with the time it was taken (time since the stream started, measured
/// outside), and an ``Action`` may come out. No clock, no I/O.
///
/// ```swift
/// var adaptation = VideoLinkAdaptation()
/// if let action = adaptation.observe(report, at: .seconds(12)) { apply(action) }   // .reduce or .restore
/// ```
struct VideoLinkAdaptation: Sendable {
    /// When the link counts as weak, and how long it must stay weak (or good) before the format changes.
    struct Thresholds: Sendable, Hashable {
        /// Loss above this fraction of the packets (0…1) makes a report bad.
        var lossFraction: Double
        /// A round-trip time above this makes a report bad (a saturated link queues before it drops).
        var roundTrip: Duration
        /// How long every report must have been bad before the video is reduced.
        var reduceAfter: Duration
        /// How long every report must have been good before the configured video comes back.
        var restoreAfter: Duration

        init(lossFraction: Double, roundTrip: Duration, reduceAfter: Duration, restoreAfter: Duration) {
            self.lossFraction = lossFraction
            self.roundTrip = roundTrip
            self.reduceAfter = reduceAfter
            self.restoreAfter = restoreAfter
        }

        /// More than 5 % loss (or 500 ms round trip) for 3 s reduces; 10 s without restores.
        static let standard = Thresholds(
            lossFraction: 0.05, roundTrip: .milliseconds(500), reduceAfter: .seconds(3), restoreAfter: .seconds(10)
        )
    }

    /// What the receiver reported since the previous report (either may be missing).
    struct Report: Sendable, Hashable {
        /// The fraction of the video's packets lost (0…1), from the receiver's reports since the previous one.
        var fractionLost: Double?
        /// The round-trip time the receiver's last report gave.
        var roundTrip: Duration?

        init(fractionLost: Double? = nil, roundTrip: Duration? = nil) {
            self.fractionLost = fractionLost
            self.roundTrip = roundTrip
        }
    }

    /// The video the sender should send.
    enum Quality: Sendable, Hashable {
        /// The configured format and bitrate.
        case configured
        /// The weak-link format (``reducedFormat(of:)``) and bitrate (``reducedBitrate(of:)``).
        case reduced
    }

    /// What the sender must do.
    enum Action: Sendable, Hashable {
        /// Switch to the weak-link format and bitrate.
        case reduce
        /// Switch back to the configured format and bitrate.
        case restore
    }

    private enum State: Sendable, Hashable {
        /// Configured video; `badSince`: when the current run of bad reports began.
        case configured(badSince: Duration?)
        /// Reduced video; `goodSince`: when the current run of good reports began.
        case reduced(goodSince: Duration?)
    }

    let thresholds: Thresholds
    private var state = State.configured(badSince: nil)

    init(thresholds: Thresholds = .standard) {
        self.thresholds = thresholds
    }

    /// The video the sender should be sending now.
    var quality: Quality {
        switch state {
        case .configured: return .configured
        case .reduced: return .reduced
        }
    }

    /// Takes one report (about once a second) taken at `time`; returns what to change, if anything.
    ///
    /// - Parameters:
    ///   - report: What the receiver reported. It is bad when its loss or round trip is above the thresholds, good
    ///     when it has a loss under them; one with no loss and a short round trip says nothing and changes nothing.
    ///   - time: When it was taken, on any monotonic time line (e.g. since the stream started).
    /// - Returns: ``Action/reduce`` after reports were bad for ``Thresholds/reduceAfter``,
    ///   ``Action/restore`` after they were good for ``Thresholds/restoreAfter``, otherwise nil.
    mutating func observe(_ report: Report, at time: Duration) -> Action? {
        guard let bad = isBad(report) else { return nil }
        switch state {
        case .configured(let badSince):
            guard bad else {
                state = .configured(badSince: nil)
                return nil
            }
            let since = badSince ?? time
            if time - since >= thresholds.reduceAfter {
                state = .reduced(goodSince: nil)
                return .reduce
            }
            state = .configured(badSince: since)
            return nil
        case .reduced(let goodSince):
            guard !bad else {
                state = .reduced(goodSince: nil)
                return nil
            }
            let since = goodSince ?? time
            if time - since >= thresholds.restoreAfter {
                state = .configured(badSince: nil)
                return .restore
            }
            state = .reduced(goodSince: since)
            return nil
        }
    }

    /// Whether a report is bad (nil: it says nothing about the link). Without a loss figure (no receiver report on
    /// the video since the previous one) only a long round trip counts: a short one does not make the link good.
    private func isBad(_ report: Report) -> Bool? {
        if let roundTrip = report.roundTrip, roundTrip > thresholds.roundTrip { return true }
        guard let loss = report.fractionLost else { return nil }
        return loss > thresholds.lossFraction
    }

    // MARK: - The weak-link video

    /// The height of the weak-link video.
    static let reducedHeight = 480

    /// The weak-link format for a configured one: 480 lines at the same aspect ratio (854x480 for 1280x720) and
    /// frame rate; a format of 480 lines or fewer is kept as it is (only the bitrate drops).
    static func reducedFormat(of format: GStreamerMediaEngine.VideoFormat) -> GStreamerMediaEngine.VideoFormat {
        guard format.height > reducedHeight, format.width > 0 else { return format }
        // Rounded to an even width: I420 and the encoders need whole chroma samples.
        let width = Int((Double(format.width) * Double(reducedHeight) / Double(format.height) / 2).rounded()) * 2
        return .init(width: width, height: reducedHeight, framesPerSecond: format.framesPerSecond)
    }

    /// The weak-link bitrate: half the configured one, at least 100 kbps (never more than configured).
    static func reducedBitrate(of bitrate: Int) -> Int {
        min(bitrate, max(100_000, bitrate / 2))
    }
}
