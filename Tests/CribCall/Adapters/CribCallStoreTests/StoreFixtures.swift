import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import TestSupport

/// Builders shared by the store tests.
enum StoreFixtures {
    /// A fingerprint whose 32 bytes all equal `byte`.
    static func fingerprint(_ byte: UInt8) -> CertificateFingerprint {
        CertificateFingerprint(bytes: [UInt8](repeating: byte, count: 32))!
    }

    /// A listener with a distinct fingerprint per `byte`.
    static func listener(_ id: String, name: String = "Phone", byte: UInt8) -> TrustedListener {
        TrustedListener(listenerId: id, name: name, publicKey: "MCowBQYDK2VwAyEA\(id)", fingerprint: fingerprint(byte))
    }

    /// A whole-second date, so it survives the database's millisecond storage exactly.
    static func date(_ seconds: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(1_700_000_000 + seconds))
    }

    /// Runs `body` with a fresh temporary data directory (mode 0700), removed afterwards.
    static func withDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = try Subprocess.temporaryDirectory("cribcall-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        return try body(directory)
    }

    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = try Subprocess.temporaryDirectory("cribcall-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        return try await body(directory)
    }
}
