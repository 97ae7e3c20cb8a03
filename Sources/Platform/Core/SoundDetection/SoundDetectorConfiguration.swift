/// Tunable parameters of the ``SoundDetector``: how loud, for how long, and how often a noise event may fire.
///
/// Every initializer validates its arguments against the `…Range` constants and throws a
/// ``SoundDetectorConfigurationError`` naming the allowed range. The stored properties stay publicly settable
/// for convenience; a value set out of range later is clamped into range by the detector (see
/// ``clamped()``), and ``validate()`` reports it explicitly.
///
/// Decoding validates as well: absent keys take their defaults, out-of-range values fail with
/// `DecodingError.dataCorrupted` whose underlying error is a ``SoundDetectorConfigurationError``.
public struct SoundDetectorConfiguration: Sendable, Hashable, Codable {
    /// Allowed values of ``threshold`` (sound level, see ``SoundLevel``).
    public static let thresholdRange: ClosedRange<Int> = 0...100
    /// Allowed values of ``minDurationMs``: one 20 ms frame up to one minute.
    public static let minDurationMsRange: ClosedRange<Int> = 20...60_000
    /// Allowed values of ``cooldownSeconds``: none up to one hour.
    public static let cooldownSecondsRange: ClosedRange<Int> = 0...3600

    /// Level (0...100) a frame must reach to count as loud. Default 60 (about −36 dBFS).
    public var threshold: Int
    /// How long the loud streak must last before an event fires, in milliseconds. Default 600.
    ///
    /// Rounded up to whole 20 ms frames: 610 ms requires 31 loud frames.
    public var minDurationMs: Int
    /// Minimum distance between two events, in seconds of audio. Default 10.
    public var cooldownSeconds: Int

    /// The protocol defaults: threshold 60, 600 ms, 10 s cooldown.
    public static let `default` = SoundDetectorConfiguration(
        uncheckedThreshold: 60,
        minDurationMs: 600,
        cooldownSeconds: 10
    )

    /// Creates a validated configuration.
    ///
    /// - Parameters:
    ///   - threshold: Loud-frame level, 0...100.
    ///   - minDurationMs: Required loud streak in milliseconds, 20...60 000.
    ///   - cooldownSeconds: Minimum seconds between events, 0...3600.
    /// - Throws: ``SoundDetectorConfigurationError`` for the first argument outside its range.
    public init(
        threshold: Int = 60,
        minDurationMs: Int = 600,
        cooldownSeconds: Int = 10
    ) throws(SoundDetectorConfigurationError) {
        self.init(uncheckedThreshold: threshold, minDurationMs: minDurationMs, cooldownSeconds: cooldownSeconds)
        try validate()
    }

    private init(uncheckedThreshold threshold: Int, minDurationMs: Int, cooldownSeconds: Int) {
        self.threshold = threshold
        self.minDurationMs = minDurationMs
        self.cooldownSeconds = cooldownSeconds
    }

    /// Checks every field against its allowed range.
    ///
    /// - Throws: ``SoundDetectorConfigurationError`` for the first field outside its range.
    public func validate() throws(SoundDetectorConfigurationError) {
        guard Self.thresholdRange.contains(threshold) else {
            throw .outOfRange(field: "threshold", value: threshold, range: Self.thresholdRange)
        }
        guard Self.minDurationMsRange.contains(minDurationMs) else {
            throw .outOfRange(field: "minDurationMs", value: minDurationMs, range: Self.minDurationMsRange, unit: "ms")
        }
        guard Self.cooldownSecondsRange.contains(cooldownSeconds) else {
            throw .outOfRange(
                field: "cooldownSeconds",
                value: cooldownSeconds,
                range: Self.cooldownSecondsRange,
                unit: "s"
            )
        }
    }

    /// The same configuration with every field clamped into its allowed range.
    ///
    /// - Returns: A configuration for which ``validate()`` does not throw.
    public func clamped() -> SoundDetectorConfiguration {
        SoundDetectorConfiguration(
            uncheckedThreshold: threshold.clamped(to: Self.thresholdRange),
            minDurationMs: minDurationMs.clamped(to: Self.minDurationMsRange),
            cooldownSeconds: cooldownSeconds.clamped(to: Self.cooldownSecondsRange)
        )
    }

    private enum CodingKeys: String, CodingKey {
        case threshold
        case minDurationMs
        case cooldownSeconds
    }

    /// Decodes and validates a configuration; absent keys take the defaults.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` for malformed input, `DecodingError.dataCorrupted` wrapping a
    ///   ``SoundDetectorConfigurationError`` for out-of-range values.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = Self.default
        self.init(
            uncheckedThreshold: try container.decodeIfPresent(Int.self, forKey: .threshold) ?? defaults.threshold,
            minDurationMs: try container.decodeIfPresent(Int.self, forKey: .minDurationMs) ?? defaults.minDurationMs,
            cooldownSeconds: try container.decodeIfPresent(Int.self, forKey: .cooldownSeconds)
                ?? defaults.cooldownSeconds
        )
        do {
            try validate()
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath + [CodingKeys(rawValue: error.field)].compactMap { $0 },
                    debugDescription: error.message,
                    underlyingError: error
                )
            )
        }
    }
}

extension Comparable {
    /// The value limited to `range`.
    func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
