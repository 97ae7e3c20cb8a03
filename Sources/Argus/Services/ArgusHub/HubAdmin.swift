public import ArgusStore
public import Foundation

/// What the hub's owner does on the hub's machine, with or without the hub running (`argus-hub pair`,
/// `argus-hub devices list|revoke`): straight on its database, which SQLite shares between processes.
public struct HubAdmin: Sendable {
    let database: ArgusDatabase

    public init(dataDirectory: URL) throws {
        guard FileManager.default.fileExists(atPath: dataDirectory.path) else {
            throw HubError(
                "\(dataDirectory.path) does not exist: start `argus-hub --data-dir \(dataDirectory.path)` once first.")
        }
        database = try ArgusDatabase(directory: dataDirectory)
    }

    /// The owner's actions on a database already open (the running hub's, for its owner's page).
    init(database: ArgusDatabase) {
        self.database = database
    }

    /// A new pairing code (6 digits, 5 minutes, single use).
    public func pair(now: Date = Date()) throws -> (code: String, expiresAt: Date) {
        try database.createPairingCode(now: now)
    }

    public func devices() throws -> [PairedDevice] { try database.devices() }

    /// Revokes a device by its id (or the first characters of it, when they name one device only).
    public func revoke(_ idOrPrefix: String, now: Date = Date()) throws -> PairedDevice {
        let matches = try database.devices().filter { $0.isActive && $0.deviceId.hasPrefix(idOrPrefix) }
        guard let device = matches.first else {
            throw HubError("no paired device has the id \(idOrPrefix): see `argus-hub devices list`.")
        }
        guard matches.count == 1 || device.deviceId == idOrPrefix else {
            throw HubError("\(idOrPrefix) names \(matches.count) devices: give more of the id.")
        }
        try database.revokeDevice(device.deviceId, now: now)
        return device
    }
}
