import CribCallListener
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import DeviceIdentity
public import Foundation

/// `argus-hub monitors …`: the CribCall monitors the hub watches, paired the way a CribCall listener pairs (the
/// same requests as `cribcall pair`, in the hub's CribCall data directory).
public enum NurseryCommands {
    /// The hub's CribCall data directory: `cribcall/` inside the hub's.
    public static func data(hub directory: URL) -> CribCallDataDirectory {
        CribCallDataDirectory(path: directory.appendingPathComponent("cribcall", isDirectory: true).path)
    }

    /// Pairs the hub with a monitor and returns what to tell the owner.
    /// - Parameter enterPIN: Asked for the PIN (PIN pairing without a PIN given).
    public static func pair(
        _ pairing: MonitorPairing, hub directory: URL,
        enterPIN: @escaping @Sendable (MonitorPairing.PINPrompt) async -> String?
    ) async throws -> String {
        let record = try await pairing.pair(in: data(hub: directory), enterPIN: enterPIN)
        return "Paired with \"\(PeerName.sanitized(record.name))\" (\(record.fingerprint.shortForm)). "
            + "It is a camera of the hub from now on (within a few seconds if the hub runs): its noise and safety "
            + "alerts become events, with a picture from its camera."
    }

    /// The paired monitors (a table, or one JSON object per line).
    public static func list(hub directory: URL, json: Bool) throws -> [String] {
        try PairedMonitors.list(
            in: data(hub: directory), json: json,
            howToPair: "Pair one with `argus-hub monitors pair --qr TEXT` (the text of the monitor's QR code).")
    }

    /// Unpairs a monitor (telling it when it can be reached) and returns what to tell the owner.
    public static func forget(_ id: String, hub directory: URL) async throws -> String {
        try await PairedMonitors.forget(id, in: data(hub: directory), listing: "argus-hub monitors list")
    }
}
