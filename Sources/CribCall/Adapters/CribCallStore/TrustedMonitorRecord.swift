public import DeviceIdentity
public import Foundation
public import GRDB

/// A row of `trustedMonitor`: a monitor this listener paired with (listener side).
public struct TrustedMonitorRecord: Sendable, Hashable, Codable, FetchableRecord, PersistableRecord {
    /// The table name, `trustedMonitor`.
    public static let databaseTableName = "trustedMonitor"

    /// The monitor's id (primary key).
    public var monitorId: String
    /// The monitor's name as shown to the user.
    public var name: String
    /// SHA-256 of the monitor's certificate, stored as 64 lowercase hex characters (unique).
    public var fingerprint: CertificateFingerprint
    /// The host the monitor was last reached at, if known.
    public var lastKnownHost: String?
    /// The port the monitor was last reached at, if known.
    public var lastKnownPort: Int?
    /// The highest event `seq` received from this monitor (0 = none), for `EVENTS_SINCE`.
    public var lastSeq: Int64
    /// When the monitor was paired (stored with millisecond precision).
    public var createdAt: Date

    /// The string column names.
    public enum CodingKeys: String, CodingKey, ColumnExpression {
        case monitorId, name, fingerprint, lastKnownHost, lastKnownPort, lastSeq, createdAt
    }

    /// Creates a record.
    public init(
        monitorId: String,
        name: String,
        fingerprint: CertificateFingerprint,
        lastKnownHost: String?,
        lastKnownPort: Int?,
        lastSeq: Int64,
        createdAt: Date
    ) {
        self.monitorId = monitorId
        self.name = name
        self.fingerprint = fingerprint
        self.lastKnownHost = lastKnownHost
        self.lastKnownPort = lastKnownPort
        self.lastSeq = lastSeq
        self.createdAt = createdAt
    }

    /// Decodes a row; the fingerprint column must hold 64 hex characters.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        monitorId = try container.decode(String.self, forKey: .monitorId)
        name = try container.decode(String.self, forKey: .name)
        fingerprint = try container.decodeFingerprint(forKey: .fingerprint)
        lastKnownHost = try container.decodeIfPresent(String.self, forKey: .lastKnownHost)
        lastKnownPort = try container.decodeIfPresent(Int.self, forKey: .lastKnownPort)
        lastSeq = try container.decode(Int64.self, forKey: .lastSeq)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
    }

    /// Encodes a row, the fingerprint as lowercase hex text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(monitorId, forKey: .monitorId)
        try container.encode(name, forKey: .name)
        try container.encode(fingerprint.hex, forKey: .fingerprint)
        try container.encode(lastKnownHost, forKey: .lastKnownHost)
        try container.encode(lastKnownPort, forKey: .lastKnownPort)
        try container.encode(lastSeq, forKey: .lastSeq)
        try container.encode(createdAt, forKey: .createdAt)
    }
}
