/// The seed's storage rules: refuse to start recording with under 100 MB free, warn once a recording passes 500 MB.
/// Megabytes are decimal (1 MB = 1,000,000 bytes), as disks and `df -H` count them.
public struct StoragePolicy: Sendable, Hashable {
    public var minimumFreeBytes: Int64
    public var warningFileBytes: Int64

    public init(minimumFreeBytes: Int64 = 100_000_000, warningFileBytes: Int64 = 500_000_000) {
        self.minimumFreeBytes = minimumFreeBytes
        self.warningFileBytes = warningFileBytes
    }

    /// Why recording may not start with `freeBytes` available, or nil when it may.
    public func refusalToStart(freeBytes: Int64) -> String? {
        guard freeBytes < minimumFreeBytes else { return nil }
        return "Not enough free space to record: \(Self.megabytes(max(0, freeBytes))) free, Toukan needs at least "
            + "\(Self.megabytes(minimumFreeBytes)). Free some space and try again."
    }

    /// The warning to show when a recording's file grows from `previousBytes` to `currentBytes`, given once: when
    /// it crosses the warning size.
    public func sizeWarning(previousBytes: Int64, currentBytes: Int64) -> String? {
        guard previousBytes < warningFileBytes, currentBytes >= warningFileBytes else { return nil }
        return "This recording has passed \(Self.megabytes(warningFileBytes)) (\(Self.megabytes(currentBytes)) now); "
            + "it keeps recording, but check the free space."
    }

    /// `87.3 MB`, `100 MB`, `1.2 GB`.
    public static func megabytes(_ bytes: Int64) -> String {
        if bytes >= 1_000_000_000 { return "\(tenths(bytes, 100_000_000)) GB" }
        return "\(tenths(bytes, 100_000)) MB"
    }

    /// `bytes / (unit * 10)` to one decimal, rounded down, without a trailing `.0`.
    private static func tenths(_ bytes: Int64, _ unit: Int64) -> String {
        let value = bytes / unit
        return value % 10 == 0 ? "\(value / 10)" : "\(value / 10).\(value % 10)"
    }
}
