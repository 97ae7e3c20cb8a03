import DeviceIdentity
import DeviceIdentityStore
import Foundation
import TestSupport
import Testing

@Suite("DeviceIdentityStore: identity files on disk")
struct DeviceIdentityStoreTests {
    func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("first use creates the identity with a 0700 directory and 0600 files; next use loads the same one")
    func createThenLoad() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DeviceIdentityStore(directory: root.appendingPathComponent("nested/cribcall"))
        let first = try store.loadOrCreate()
        #expect(first.created)
        #expect(try mode(store.directory) == 0o700)
        #expect(try mode(store.identityFile) == 0o600)
        #expect(try mode(store.dtlsFile) == 0o600)

        let second = try store.loadOrCreate()
        #expect(!second.created)
        #expect(second.identity.deviceId == first.identity.deviceId)
        #expect(second.identity.fingerprint == first.identity.fingerprint)
        #expect(second.dtls.certificateDER == first.dtls.certificateDER)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.directory.path)
        #expect(Set(leftovers) == ["identity.pem", "dtls.pem"])
    }

    @Test("an existing data directory open to others is tightened to 0700")
    func directoryIsTightened() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
        _ = try DeviceIdentityStore(directory: root).loadOrCreate()
        #expect(try mode(root) == 0o700)
    }

    @Test("a damaged identity file is reported with its path and left byte-for-byte untouched")
    func corruptFileIsNeverRegenerated() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DeviceIdentityStore(directory: root)
        _ = try store.loadOrCreate()
        var bytes = try Array(Data(contentsOf: store.identityFile))
        bytes[bytes.count / 2] ^= 0x5A  // flip bits inside the base64 body
        try Data(bytes).write(to: store.identityFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.identityFile.path)

        let error = #expect(throws: IdentityStoreError.self) { try store.loadOrCreate() }
        #expect(error?.code == .corrupt)
        #expect(error?.path == store.identityFile.path)
        #expect(error?.message.contains("backup") == true)
        #expect(try Array(Data(contentsOf: store.identityFile)) == bytes)
    }

    @Test("an identity file holding another device's certificate is refused")
    func swappedCertificateIsRefused() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DeviceIdentityStore(directory: root)
        let mine = try store.loadOrCreate().identity
        let other = try DeviceIdentity.generate(now: Date())
        try Data((mine.privateKeyPEM() + other.certificatePEM).utf8).write(to: store.identityFile)
        let error = #expect(throws: IdentityStoreError.self) { try store.loadIdentity() }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("not issued for the stored private key") == true)
    }

    @Test("an empty identity file is corrupt, not a reason to start over")
    func emptyFileIsCorrupt() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DeviceIdentityStore(directory: root)
        _ = FileManager.default.createFile(
            atPath: store.identityFile.path, contents: Data(), attributes: [.posixPermissions: 0o600])
        let error = #expect(throws: IdentityStoreError.self) { try store.loadOrCreate() }
        #expect(error?.code == .corrupt)
    }

    @Test("a key file readable by other users is refused with the chmod that fixes it")
    func loosePermissionsAreRefused() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DeviceIdentityStore(directory: root)
        _ = try store.loadOrCreate()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.identityFile.path)
        let error = #expect(throws: IdentityStoreError.self) { try store.loadOrCreate() }
        #expect(error?.code == .insecurePermissions)
        #expect(error?.message.contains("chmod 600 \(store.identityFile.path)") == true)
    }

    @Test("a missing DTLS file is recreated without touching the device identity")
    func missingDTLSIsRecreated() throws {
        let root = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DeviceIdentityStore(directory: root)
        let first = try store.loadOrCreate()
        try FileManager.default.removeItem(at: store.dtlsFile)
        let second = try store.loadOrCreate()
        #expect(!second.created)
        #expect(second.identity.fingerprint == first.identity.fingerprint)
        #expect(second.dtls.certificateDER != first.dtls.certificateDER)
    }

    @Test("the default data directory follows XDG_DATA_HOME, then HOME")
    func defaultDirectory() {
        #expect(
            DataDirectory.defaultURL(product: "cribcall", environment: ["XDG_DATA_HOME": "/x/data", "HOME": "/h"])
                .path == "/x/data/cribcall")
        #expect(
            DataDirectory.defaultURL(product: "cribcall", environment: ["HOME": "/home/anna"])
                .path == "/home/anna/.local/share/cribcall")
        #expect(
            DataDirectory.defaultURL(product: "cribcall", environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"])
                .path == "/h/.local/share/cribcall")
    }
}
