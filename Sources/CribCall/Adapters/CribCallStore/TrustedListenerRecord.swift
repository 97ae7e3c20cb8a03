public import DeviceIdentity
public import Foundation
public import GRDB

/// A row of `trustedListener`: a listener this monitor paired with (monitor side).
public struct TrustedListenerRecord: Sendable, Hashable, Codable, FetchableRecord, PersistableRecord {
    /// The table name, `trustedListener`.
    public static let databaseTableName = "trustedListener"

    /// The listener's id (primary key).
    public var listenerId: String
    /// The name the listener gave when pairing.
    public var name: String
    /// Base64 DER SubjectPublicKeyInfo of the listener's TLS certificate key.
    public var publicKey: String
    /// SHA-256 of the listener's certificate, stored as 64 lowercase hex characters (unique).
    public var fingerprint: CertificateFingerprint
    /// When the listener was paired (stored with millisecond precision).
    public var createdAt: Date

    /// The string column names.
    public enum CodingKeys: String, CodingKey, ColumnExpression {
        case listenerId, name, publicKey, fingerprint, createdAt
    }

    /// Creates a record.
    public init(
        listenerId: String,
        name: String,
        publicKey: String,
        fingerprint: CertificateFingerprint,
        createdAt: Date
    ) {
        self.listenerId = listenerId
        self.name = name
        self.publicKey = publicKey
        self.fingerprint = fingerprint
        self.createdAt = createdAt
    }

    /// Decodes a row; the fingerprint column must hold 64 hex characters.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        listenerId = try container.decode(String.self, forKey: .listenerId)
        name = try container.decode(String.self, forKey: .name)
        publicKey = try container.decode(String.self, forKey: .publicKey)
        fingerprint = try container.decodeFingerprint(forKey: .fingerprint)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
    }

    /// Encodes a row, the fingerprint as lowercase hex text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(listenerId, forKey: .listenerId)
        try container.encode(name, forKey: .name)
        try container.encode(publicKey, forKey: .publicKey)
        try container.encode(fingerprint.hex, forKey: .fingerprint)
        try container.encode(createdAt, forKey: .createdAt)
    }
}
