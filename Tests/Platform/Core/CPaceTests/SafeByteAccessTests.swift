import Crypto
import TestSupport
import Testing

@testable import CPace

/// The pointer-free byte paths of the CPace module: reading an X25519 shared secret, decoding field elements
/// from slices, and the streamed ISK hash.
@Suite("CPace byte access without raw pointers")
struct SafeByteAccessTests {
    @Test("bytes(of:) returns exactly the X25519 shared secret, unclamped")
    func sharedSecretBytes() throws {
        for _ in 0..<32 {
            let a = Curve25519.KeyAgreement.PrivateKey()
            let b = Curve25519.KeyAgreement.PrivateKey()
            let secret = try a.sharedSecretFromKeyAgreement(with: b.publicKey)
            let bytes = try CPace.bytes(of: secret)
            #expect(bytes.count == 32)
            // swift-crypto's constant-time comparison of the secret with a byte collection.
            #expect(secret == bytes)
            // Both parties read the same K.
            #expect(try CPace.bytes(of: b.sharedSecretFromKeyAgreement(with: a.publicKey)) == bytes)
        }
    }

    @Test("x25519Vfy agrees with swift-crypto and reports the identity for a low-order point")
    func x25519Vfy() throws {
        let a = Curve25519.KeyAgreement.PrivateKey()
        let b = Curve25519.KeyAgreement.PrivateKey()
        let k = try CPace.x25519Vfy(a, Array(b.publicKey.rawRepresentation))
        #expect(try a.sharedSecretFromKeyAgreement(with: b.publicKey) == k)
        #expect(throws: CPaceError.identityElement) { try CPace.x25519Vfy(a, CPace.identity) }
        #expect(CPace.scalarMult(a, CPace.identity) == CPace.identity)
    }

    @Test("a field element decodes the same from an array and from a slice with a non-zero start index")
    func decodeFromSlice() {
        var generator = SplitMix64(seed: 0x5AFE_B17E)
        for _ in 0..<64 {
            let bytes = (0..<32).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let padded = [0xAA, 0xBB, 0xCC] + bytes + [0xDD]
            let slice = padded[3..<35]
            #expect(slice.startIndex == 3)
            #expect(FieldElement25519(bytes: slice).bytes == FieldElement25519(bytes: bytes).bytes)
            #expect(CPace.decodeUCoordinate(slice).bytes == CPace.decodeUCoordinate(bytes).bytes)
        }
    }

    @Test("the streamed ISK hash equals SHA-512 over lv_cat(DSI_ISK, sid, K) || transcript")
    func iskMatchesPlainHash() {
        let sid = (0..<16).map { UInt8($0) }
        let k = (0..<32).map { UInt8(truncatingIfNeeded: 0xF0 + $0) }
        let transcript = Array("transcript".utf8)
        let expected = CPace.sha512(CPace.lvCat(CPace.dsiISK, sid, k) + transcript)
        let fromArray = CPace.isk(sid: sid, k: k, transcript: transcript)
        let fromSlice = CPace.isk(sid: sid, k: ([0] + k)[1...], transcript: transcript)
        #expect(fromArray == SymmetricKey(data: expected))
        #expect(fromSlice == SymmetricKey(data: expected))
    }

    @Test("the streamed generator-string hash is the prefix of SHA-512 over the assembled generator string")
    func generatorHashSlice() {
        let prs = Array("password".utf8)
        let ci = Array("channel".utf8)
        let sid = (0..<16).map { UInt8(255 - $0) }
        let expected = Array(CPace.sha512(CPace.generatorString(prs: prs, ci: ci, sid: sid)).prefix(32))
        #expect(CPace.withGeneratorStringHash(prs: prs, ci: ci, sid: sid) { Array($0) } == expected)
    }
}
