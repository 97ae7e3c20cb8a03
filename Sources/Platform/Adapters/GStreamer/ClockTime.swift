import CGStreamer

/// Conversions between Swift durations and GStreamer's nanosecond clock times.
enum ClockTime {
    /// `duration` in nanoseconds; negative durations are 0.
    static func from(_ duration: Duration) -> GstClockTime {
        let parts = duration.components
        return GstClockTime(max(0, parts.seconds)) * cgst_second
            + GstClockTime(max(0, parts.attoseconds) / 1_000_000_000)
    }

    /// A clock time as a duration; nil for `GST_CLOCK_TIME_NONE`.
    static func duration(_ time: GstClockTime) -> Duration? {
        time == GstClockTime.max ? nil : .nanoseconds(Int64(clamping: time))
    }
}
