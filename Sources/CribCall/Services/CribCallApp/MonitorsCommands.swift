public import CribCallRuntime
public import CribCallStore

/// `cribcall monitors list|forget`: the monitors this listener trusts.
public enum MonitorsCommands {
    static let howToPair = "Find one with `cribcall scan`, then `cribcall pair`."

    /// The paired monitors as a table (or how to pair one), or one JSON object per line. Returns the lines to print.
    public static func list(in data: CribCallDataDirectory, json: Bool) throws -> [String] {
        try PairedMonitors.list(in: data, json: json, howToPair: howToPair)
    }

    /// Unpairs the monitor `id` names (telling it when it can be reached) and returns what to tell the user.
    public static func forget(_ id: String, in data: CribCallDataDirectory) async throws -> String {
        try await PairedMonitors.forget(id, in: data, listing: listing)
    }

    /// The paired monitor `id` names (`--open`, `--monitor`).
    static func resolve(_ id: String, among monitors: [TrustedMonitorRecord]) throws -> TrustedMonitorRecord {
        try PairedMonitors.resolve(id, among: monitors, listing: listing)
    }

    static let listing = "cribcall monitors list"
}
