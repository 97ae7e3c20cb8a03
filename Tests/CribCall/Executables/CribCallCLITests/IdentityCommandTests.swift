import CanonicalJSON
import Foundation
import TestSupport
import Testing

@Suite("cribcall identity")
struct IdentityCommandTests {
    func identity(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), ["identity"] + arguments)
    }

    @Test("--json prints the public facts once; openssl accepts the certificate and agrees on the fingerprint")
    func jsonOutputAcceptedByOpenSSL() async throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await identity(["--data-dir", directory.path, "--json"])
        #expect(first.status == 0, "stderr: \(first.stderrText)")
        let object = try JSONParser().parse(first.stdout)
        #expect(object["event"] == "identity")
        #expect(object["created"] == true)
        let deviceId = try #require(object["deviceId"]?.stringValue)
        let fingerprint = try #require(object["certFingerprint"]?.stringValue)
        let pem = try #require(object["certificatePEM"]?.stringValue)
        let publicKey = try #require(object["publicKey"]?.stringValue)
        #expect(!first.stdoutText.contains("PRIVATE KEY"))

        let certificate = directory.appendingPathComponent("printed.pem")
        try Data(pem.utf8).write(to: certificate)
        let text = try await Subprocess.run("openssl", ["x509", "-in", certificate.path, "-noout", "-text"])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("ED25519"))
        #expect(text.stdoutText.contains("URI:cribcall:\(deviceId)"))
        let der = try await Subprocess.run("openssl", ["x509", "-in", certificate.path, "-outform", "der"])
        let sum = try await Subprocess.run("sha256sum", [], stdin: der.stdout)
        #expect(sum.stdoutText.hasPrefix(fingerprint))
        let spki = try await Subprocess.run("openssl", ["x509", "-in", certificate.path, "-noout", "-pubkey"])
        let spkiDER = try await Subprocess.run("openssl", ["pkey", "-pubin", "-outform", "der"], stdin: spki.stdout)
        #expect(Data(spkiDER.stdout).base64EncodedString() == publicKey)

        let second = try await identity(["--data-dir", directory.path, "--json"])
        let again = try JSONParser().parse(second.stdout)
        #expect(again["created"] == false)
        #expect(again["deviceId"] == .string(deviceId))
        #expect(again["certFingerprint"] == .string(fingerprint))
    }

    @Test("the text form shows the four facts")
    func textOutput() async throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await identity(["--data-dir", directory.path])
        #expect(result.status == 0)
        for label in ["deviceId:", "certFingerprint:", "publicKey:", "-----BEGIN CERTIFICATE-----"] {
            #expect(result.stdoutText.contains(label))
        }
    }

    @Test("a damaged identity file fails with its path and how to recover, and is not replaced")
    func corruptIdentity() async throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await identity(["--data-dir", directory.path]).status == 0)
        let file = directory.appendingPathComponent("identity.pem")
        try Data("garbage".utf8).write(to: file)
        let result = try await identity(["--data-dir", directory.path, "--json"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText.contains(file.path))
        #expect(result.stderrText.contains("backup"))
        #expect(try String(contentsOf: file, encoding: .utf8) == "garbage")
    }
}
