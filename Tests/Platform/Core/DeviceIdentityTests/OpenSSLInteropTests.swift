import DeviceIdentity
import DeviceIdentityStore
import Foundation
import TestSupport
import Testing

/// The certificate checked by an independent X.509 parser: OpenSSL.
@Suite("DeviceIdentity read back by openssl")
struct OpenSSLInteropTests {
    @Test("openssl sees an Ed25519 key, the SAN URI, and the same fingerprint")
    func opensslAgrees() async throws {
        let identity = try DeviceIdentity.generate(now: Date())
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem")
        try Data(identity.certificatePEM.utf8).write(to: certificate)

        let text = try await Subprocess.run("openssl", ["x509", "-in", certificate.path, "-noout", "-text"])
        #expect(text.status == 0, "openssl x509 failed: \(text.stderrText)")
        #expect(text.stdoutText.contains("Public Key Algorithm: ED25519"))
        #expect(text.stdoutText.contains("Signature Algorithm: ED25519"))
        #expect(text.stdoutText.contains("URI:cribcall:\(identity.deviceId.lowercasedString)"))
        #expect(text.stdoutText.contains("CN = \(identity.deviceId.lowercasedString)"))

        let der = try await Subprocess.run("openssl", ["x509", "-in", certificate.path, "-outform", "der"])
        #expect(der.status == 0)
        let sum = try await Subprocess.run("sha256sum", [], stdin: der.stdout)
        #expect(sum.stdoutText.split(separator: " ").first.map(String.init) == identity.fingerprint.hex)

        let verify = try await Subprocess.run(
            "openssl",
            ["verify", "-CAfile", certificate.path, "-check_ss_sig", "-partial_chain", certificate.path]
        )
        #expect(
            verify.status == 0, "openssl could not verify the self-signature: \(verify.stdoutText)\(verify.stderrText)")
    }

    @Test("openssl derives the same public key from the stored private key")
    func privateKeyMatchesCertificate() async throws {
        let identity = try DeviceIdentity.generate(now: Date())
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem")
        try Data(identity.privateKeyPEM().utf8).write(to: key)
        let derived = try await Subprocess.run("openssl", ["pkey", "-in", key.path, "-pubout", "-outform", "der"])
        #expect(derived.status == 0, "openssl pkey failed: \(derived.stderrText)")
        #expect(derived.stdout == identity.publicKeySPKI)
    }

    @Test("openssl reads the DTLS certificate as ECDSA P-256")
    func dtlsCertificate() async throws {
        let dtls = try DTLSCertificate.generate(now: Date())
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("dtls.pem")
        try Data(dtls.certificatePEM.utf8).write(to: certificate)
        let text = try await Subprocess.run("openssl", ["x509", "-in", certificate.path, "-noout", "-text"])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("ASN1 OID: prime256v1"))
        #expect(text.stdoutText.contains("Signature Algorithm: ecdsa-with-SHA256"))
        let fingerprint = try await Subprocess.run(
            "openssl", ["x509", "-in", certificate.path, "-noout", "-fingerprint", "-sha256"]
        )
        let opensslValue = fingerprint.stdoutText.split(separator: "=", maxSplits: 1).last
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect("sha-256 " + (opensslValue ?? "") == dtls.sdpFingerprint)
    }

    @Test("the stored identity.pem and dtls.pem are read whole by openssl: key and certificate from one file")
    func storedFilesAreStandardPEM() async throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loaded = try DeviceIdentityStore(directory: directory).loadOrCreate()
        for (name, spki) in [("identity.pem", loaded.identity.publicKeySPKI), ("dtls.pem", nil)] {
            let file = directory.appendingPathComponent(name).path
            let key = try await Subprocess.run("openssl", ["pkey", "-in", file, "-pubout", "-outform", "der"])
            #expect(key.status == 0, "openssl pkey \(name): \(key.stderrText)")
            if let spki { #expect(key.stdout == spki) }
            let certificate = try await Subprocess.run("openssl", ["x509", "-in", file, "-noout", "-subject"])
            #expect(certificate.status == 0, "openssl x509 \(name): \(certificate.stderrText)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!text.contains("----------"), "\(name) runs two PEM lines together")
        }
    }
}
