/// What the listener does when a monitor's NOISE_EVENT offers an automatic stream (seed FR7.2: "notify vs
/// auto-open stream").
public enum OnNoiseAction: String, Sendable, Hashable, Codable, CaseIterable {
    /// Show the alert only; an automatic stream the monitor offers is ended at once.
    case notify
    /// Show the alert and open the automatic stream the monitor offers.
    case open
}
