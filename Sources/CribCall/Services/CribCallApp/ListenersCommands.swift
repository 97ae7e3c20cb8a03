import CanonicalJSON
public import CribCallRuntime
import CribCallStore
import DeviceIdentity
import Foundation

/// `cribcall listeners list|revoke`: the listeners this monitor trusts.
public enum ListenersCommands {
    /// The paired listeners as a table (or how to pair one), or one JSON object per line with `"event":"listener"`.
    /// Creates nothing when the data directory is empty. Returns the lines to print.
    public static func list(in data: CribCallDataDirectory, json: Bool) throws -> [String] {
        let listeners = try data.existingDatabase()?.trustedListeners() ?? []
        if json { return listeners.map { jsonObject($0).canonicalString } }
        return [table(listeners)]
    }

    /// Unpairs the listener `id` names (an id or a unique prefix of at least 4 characters); a running monitor
    /// disconnects it within a second. Returns what to tell the user.
    public static func revoke(_ id: String, in data: CribCallDataDirectory) throws -> String {
        // Nothing to revoke in a database that does not exist: do not create it just to say so.
        guard let database = try data.existingDatabase() else { throw unknown(id) }
        let listener = try resolve(id, among: try database.trustedListeners())
        guard try database.revokeListener(id: listener.listenerId) else {
            // Revoked by someone else between the lookup and now.
            throw unknown(id)
        }
        return "Revoked \(TextTable.printable(listener.name)) (\(TextTable.printable(listener.listenerId)))."
            + " A running monitor disconnects it within a second."
    }

    /// Finds the listener `id` names: an exact id, else a unique prefix of at least 4 characters.
    static func resolve(_ id: String, among listeners: [TrustedListenerRecord]) throws -> TrustedListenerRecord {
        try DeviceLookup.find(
            id, among: listeners, id: \.listenerId, name: \.name, matchingNames: false, kind: "listener",
            unknown: unknown(id))
    }

    static func unknown(_ id: String) -> CommandFailure {
        CommandFailure("no paired listener has id \(TextTable.printable(id)); see `cribcall listeners list`")
    }

    static func jsonObject(_ listener: TrustedListenerRecord) -> JSONValue {
        .object([
            "event": "listener",
            "listenerId": .string(listener.listenerId),
            "name": .string(listener.name),
            "certFingerprint": .string(listener.fingerprint.hex),
            "createdAt": .string(TextTable.timestamp(listener.createdAt)),
        ])
    }

    /// The text listing: a header row and one aligned row per listener, or how to pair one.
    static func table(_ listeners: [TrustedListenerRecord]) -> String {
        guard !listeners.isEmpty else {
            return "No listeners are paired yet. Pair one with `cribcall monitor` and the CribCall listener app."
        }
        let rows =
            [["LISTENER ID", "NAME", "FINGERPRINT", "PAIRED AT"]]
            + listeners.map { listener in
                [
                    TextTable.printable(listener.listenerId), TextTable.printable(listener.name),
                    String(listener.fingerprint.hex.prefix(16)) + "…",
                    TextTable.timestamp(listener.createdAt),
                ]
            }
        return TextTable.render(rows)
    }
}
