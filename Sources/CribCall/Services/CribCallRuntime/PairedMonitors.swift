public import CanonicalJSON
import CribCallListener
import CribCallProtocol
public import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC

/// The monitors a CribCall listener trusts (`cribcall monitors list|forget`, an Argus hub's `monitors list|forget`).
public enum PairedMonitors {
    /// The paired monitors as a table (or how to pair one), or one JSON object per line with `"event":"monitor"`,
    /// the full fingerprint, the last known address and the last alert received (seq). Returns the lines to print.
    /// - Parameter howToPair: What the text says when none is paired (the program's own commands).
    public static func list(in data: CribCallDataDirectory, json: Bool, howToPair: String) throws -> [String] {
        let monitors = try data.existingDatabase()?.trustedMonitors() ?? []
        if json { return monitors.map { jsonObject($0).canonicalString } }
        return [table(monitors, howToPair: howToPair)]
    }

    /// Unpairs the monitor `id` names: tells it (UNPAIR) when it can be reached, and forgets it here either way.
    /// Returns what to tell the user.
    /// - Parameter listing: The command that lists the paired monitors (named when `id` matches none).
    /// - Throws: ``CribCallRuntimeError`` (``CribCallRuntimeError/Code/unknownDevice``,
    ///   ``CribCallRuntimeError/Code/ambiguous``) when `id` names no single paired monitor; the store's errors.
    public static func forget(
        _ id: String, in data: CribCallDataDirectory, listing: String
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
    public static func resolve(
        _ id: String, among monitors: [TrustedMonitorRecord], listing: String
    ) throws -> TrustedMonitorRecord {
        try DeviceLookup.find(
            id, among: monitors, id: \.monitorId, name: \.name, matchingNames: true, kind: "monitor",
            unknown: unknown(id, listing: listing))
    }

    static func unknown(_ id: String, listing: String) -> CribCallRuntimeError {
        CribCallRuntimeError(
            .unknownDevice, "no paired monitor has id or name \(TextTable.printable(id)); see `\(listing)`")
    }

    /// One monitor as a JSON line (`--json`): its name and id exact.
    public static func jsonObject(_ monitor: TrustedMonitorRecord) -> JSONValue {
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
    public static func table(_ monitors: [TrustedMonitorRecord], howToPair: String) -> String {
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
