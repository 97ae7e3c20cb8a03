public import DeviceIdentity
public import Foundation
import SwiftASN1

/// Keeps a device's identity in its data directory (adapter layer: the only place that touches these files).
///
/// Layout (directory mode 0700):
/// - `identity.pem` (0600): the Ed25519 PKCS#8 key and the device certificate.
/// - `dtls.pem` (0600): the ECDSA P-256 key and certificate for WebRTC.
///
/// Each file holds key and certificate together and is written atomically, so there is never half an identity.
/// A file that exists but cannot be used is reported, never replaced: a new identity would break every pairing.
public struct DeviceIdentityStore: Sendable {
    /// The data directory.
    public let directory: URL

    /// The identity file.
    public var identityFile: URL { directory.appendingPathComponent("identity.pem") }
    /// The DTLS certificate file.
    public var dtlsFile: URL { directory.appendingPathComponent("dtls.pem") }

    /// A store over a data directory; nothing is touched until `loadOrCreate`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// What `loadOrCreate` found or made.
    public struct Loaded: Sendable {
        public var identity: DeviceIdentity
        public var dtls: DTLSCertificate
        /// True when the device identity was created by this call.
        public var created: Bool
    }

    /// Loads the identity, creating it (and the directory) on first use.
    /// - Parameter now: The time new certificates start from.
    /// - Throws: `IdentityStoreError` — `.corrupt` names the file and how to recover; nothing is overwritten.
    public func loadOrCreate(now: Date = Date()) throws(IdentityStoreError) -> Loaded {
        try PrivateFiles.ensurePrivateDirectory(directory)
        var created = false
        let identity: DeviceIdentity
        if PrivateFiles.exists(identityFile) {
            identity = try loadIdentity()
        } else {
            do {
                identity = try DeviceIdentity.generate(now: now)
            } catch {
                throw IdentityStoreError(.cannotWrite, path: identityFile.path, error.message)
            }
            try PrivateFiles.writeNewPrivate(
                Self.pemFile(identity.privateKeyPEM(), identity.certificatePEM), to: identityFile)
            created = true
        }
        let dtls: DTLSCertificate
        if PrivateFiles.exists(dtlsFile) {
            dtls = try loadDTLS()
        } else {
            // The DTLS certificate is announced per stream over the authenticated control channel,
            // so making a new one (e.g. after an upgrade) breaks nothing.
            do {
                dtls = try DTLSCertificate.generate(now: now)
            } catch {
                throw IdentityStoreError(.cannotWrite, path: dtlsFile.path, error.message)
            }
            try PrivateFiles.writeNewPrivate(Self.pemFile(dtls.privateKeyPEM(), dtls.certificatePEM), to: dtlsFile)
        }
        return Loaded(identity: identity, dtls: dtls, created: created)
    }

    /// Loads an existing identity; never creates one.
    /// - Throws: `IdentityStoreError` if it is missing or unusable.
    public func loadIdentity() throws(IdentityStoreError) -> DeviceIdentity {
        let (key, certificate) = try pemBlocks(in: identityFile)
        do {
            return try DeviceIdentity(privateKeyPEM: key, certificatePEM: certificate)
        } catch {
            throw corrupt(identityFile, because: error.message)
        }
    }

    func loadDTLS() throws(IdentityStoreError) -> DTLSCertificate {
        let (key, certificate) = try pemBlocks(in: dtlsFile)
        do {
            return try DTLSCertificate(privateKeyPEM: key, certificatePEM: certificate)
        } catch {
            throw corrupt(dtlsFile, because: error.message)
        }
    }

    /// The stored form: the key block, then the certificate block, each ending in a newline — so OpenSSL, GnuTLS
    /// and GStreamer's DTLS element read the file too. (Files written before this kept the blocks on one line
    /// where they meet; ``pemBlocks(in:)`` reads both.)
    static func pemFile(_ key: String, _ certificate: String) -> String {
        func line(_ block: String) -> String { block.hasSuffix("\n") ? block : block + "\n" }
        return line(key) + line(certificate)
    }

    /// Splits a stored file into its key block and its certificate block.
    func pemBlocks(in file: URL) throws(IdentityStoreError) -> (key: String, certificate: String) {
        let text = try PrivateFiles.readPrivate(file)
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw corrupt(file, because: "it is not a sequence of PEM blocks")
        }
        let keys = documents.filter { $0.discriminator.hasSuffix("PRIVATE KEY") }
        let certificates = documents.filter { $0.discriminator == "CERTIFICATE" }
        guard keys.count == 1, certificates.count == 1, documents.count == 2 else {
            throw corrupt(file, because: "it must hold exactly one private key and one certificate")
        }
        return (keys[0].pemString, certificates[0].pemString)
    }

    func corrupt(_ file: URL, because reason: String) -> IdentityStoreError {
        IdentityStoreError(
            .corrupt,
            path: file.path,
            "is damaged (\(reason)). It was left untouched: a new identity would break every pairing. "
                + "Restore it from a backup, or move the data directory aside to start over as a new device "
                + "and pair again."
        )
    }
}
