import CanonicalJSON
import CribCallListener
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC

/// `cribcall monitors list|forget`: the monitors this listener trusts.
public enum MonitorsCommands {
    /// The paired monitors as a table (or how to pair one), or one JSON object per line with `"event":"monitor"`,
    /// the full fingerprint, the last known address and the last alert received (seq). Returns the lines to print.
    /// - Parameter howToPair: What the text says when none is paired (another program's commands).
    public static func list(
        in data: CribCallDataDirectory, json: Bool,
        howToPair: String = "Find one with `cribcall scan`, then `cribcall pair`."
    ) throws -> [String] {
        let monitors = try data.existingDatabase()?.trustedMonitors() ?? []
        if json { return monitors.map { jsonObject($0).canonicalString } }
        return [table(monitors, howToPair: howToPair)]
    }

    /// Unpairs the monitor `id` names: tells it (UNPAIR) when it can be reached, and forgets it here either way.
    /// Returns what to tell the user.
    /// - Parameter listing: The command that lists the paired monitors (named when `id` matches none).
    public static func forget(
        _ id: String, in data: CribCallDataDirectory, listing: String = "cribcall monitors list"
    ) async throws -> String {
        guard let database = try data.existingDatabase() else { throw unknown(id, listing: listing) }
        let monitor = try resolve(id, among: try database.trustedMonitors(), listing: listing)
        let identity = try data.identity().identity
        let service = ListenerService(
            identity: identity, name: ProcessInfo.processInfo.hostName, database: database,
            connector: try QUICConnector(identity: identity))
        let label = "\"\(PeerName.sanitized(monitor.name))\" (\(monitor.monitorId))"
        switch try await service.forget(monitor) {
        case .monitorConfirmed:
            return "Forgot \(label); the monitor confirmed it no longer trusts this listener."
        case .monitorNotTold(let reason):
            return "Forgot \(label) here, but the monitor could not be told (\(reason)); "
                + "revoke this listener there with `cribcall listeners revoke`."
        }
    }

    /// Finds the monitor `id` names: an exact id or name, else a unique id prefix of at least 4 characters.
    static func resolve(
        _ id: String, among monitors: [TrustedMonitorRecord], listing: String = "cribcall monitors list"
    ) throws -> TrustedMonitorRecord {
        try DeviceLookup.find(
            id, among: monitors, id: \.monitorId, name: \.name, matchingNames: true, kind: "monitor",
            unknown: unknown(id, listing: listing))
    }

    static func unknown(_ id: String, listing: String = "cribcall monitors list") -> CommandFailure {
        CommandFailure("no paired monitor has id or name \(TextTable.printable(id)); see `\(listing)`")
    }

    static func jsonObject(_ monitor: TrustedMonitorRecord) -> JSONValue {
        .object([
            "event": "monitor",
            "monitorId": .string(monitor.monitorId),
            "name": .string(monitor.name),
            "certFingerprint": .string(monitor.fingerprint.hex),
            "host": monitor.lastKnownHost.map(JSONValue.string) ?? .null,
            "port": monitor.lastKnownPort.map { .number(Double($0)) } ?? .null,
            "lastSeq": .number(Double(monitor.lastSeq)),
            "createdAt": .string(TextTable.timestamp(monitor.createdAt)),
        ])
    }

    /// The text listing: a header row and one aligned row per monitor (its name as it may be shown), or how to pair
    /// one.
    static func table(
        _ monitors: [TrustedMonitorRecord],
        howToPair: String = "Find one with `cribcall scan`, then `cribcall pair`."
    ) -> String {
        guard !monitors.isEmpty else { return "No monitors are paired yet. \(howToPair)" }
        let rows =
            [["MONITOR ID", "NAME", "ADDRESS", "FINGERPRINT", "PAIRED AT"]]
            + monitors.map { monitor in
                let address =
                    monitor.lastKnownHost.map { host in
                        (host.contains(":") ? "[\(host)]" : host) + (monitor.lastKnownPort.map { ":\($0)" } ?? "")
                    } ?? "unknown"
                return [
                    monitor.monitorId, PeerName.sanitized(monitor.name), address,
                    String(monitor.fingerprint.hex.prefix(16)) + "…", TextTable.timestamp(monitor.createdAt),
                ]
            }
        return TextTable.render(rows)
    }
}
