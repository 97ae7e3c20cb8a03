import DeviceIdentityStore
import Foundation
import TestSupport
import Testing

@Suite("A product's secrets in its data directory")
struct SecretFileTests {
    @Test("created 0600 in a 0700 directory, read back unchanged, never replaced; refused once others can read it")
    func secret() throws {
        let root = try Subprocess.temporaryDirectory("secret-file")
        defer { try? FileManager.default.removeItem(at: root) }
        let url = root.appendingPathComponent("data/admin-token")
        #expect(try SecretFile.load(url) == nil)
        let first = try SecretFile.loadOrCreate(url) { "first" }
        #expect(first == "first")
        #expect(try SecretFile.loadOrCreate(url) { "second" } == "first", "never replaced")
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: url.deletingLastPathComponent().path)
        #expect(directory[.posixPermissions] as? Int == 0o700)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        #expect(throws: IdentityStoreError.self) { try SecretFile.load(url) }
    }
}
