import Testing

@testable import CPace

/// Appendix B.1.10: scalar_mult_vfy on low-order and non-canonical u-coordinates, and the protocol abort.
@Suite("Low-order points (draft Appendix B.1.10)")
struct LowOrderPointTests {
    /// The suffixes of u0 … ub / q0 … qb.
    static let indices = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b"]
    /// The points that "MUST trigger the abort case when included in message from A or B".
    static let abortIndices = ["0", "1", "2", "3", "4", "5", "7"]

    @Test("the fixture's abort list matches the draft text")
    func abortListMatchesFixture() throws {
        let file = try VectorFile.load()
        let line = file.lines[try file.lineIndex(containing: "MUST trigger the abort case")]
        #expect(line.contains("u0,u1,u2,u3,u4,u5 and u7"))
    }

    @Test("scalar_mult_vfy(s, uX) = qX, identity reported as an error", arguments: indices)
    func scalarMultVfy(index: String) throws {
        let file = try VectorFile.load()
        let s = try file.inlineHex("s")
        let u = try file.inlineHex("u" + index)
        let q = try file.inlineHex("q" + index)
        #expect(u.count == 32 && q.count == 32 && s.count == 32)
        if q == CPace.identity {
            #expect(throws: CPaceError.identityElement) { try CPace.scalarMultVfy(scalar: s, point: u) }
            // scalar_mult (without _vfy) reports the same result as the encoded identity.
            #expect(CPace.scalarMult(try CPace.privateKey(s), u) == CPace.identity)
        } else {
            #expect(try CPace.scalarMultVfy(scalar: s, point: u) == q)
        }
    }

    @Test("a low-order Yb makes CPaceInitiator.finish abort", arguments: abortIndices)
    func initiatorAborts(index: String) throws {
        let point = try VectorFile.load().inlineHex("u" + index)
        let inputs = try SuiteInputs.load()
        let initiator = try CPaceInitiator(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, scalar: inputs.ya)
        let error = initiator.finishError(peerMessage: point)
        #expect(error == .identityElement)
        // And with a random scalar through the public initializer.
        let random = CPaceInitiator(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid)
        let randomError = random.finishError(peerMessage: point, peerAD: inputs.adB)
        #expect(randomError == .identityElement)
    }

    @Test("a low-order Ya makes CPaceResponder.init abort", arguments: abortIndices)
    func responderAborts(index: String) throws {
        let point = try VectorFile.load().inlineHex("u" + index)
        let inputs = try SuiteInputs.load()
        #expect(throws: CPaceError.identityElement) {
            try CPaceResponder(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, peerMessage: point, scalar: inputs.yb)
        }
        #expect(throws: CPaceError.identityElement) {
            try CPaceResponder(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, peerMessage: point, peerAD: [1])
        }
    }

    @Test("non-canonical encodings (bit 255 set, u ≥ p) equal their canonical counterparts")
    func nonCanonicalInputs() throws {
        let inputs = try SuiteInputs.load()
        let yb = try VectorFile.load().hexBlock("Yb:", after: "B.1.3.")
        let k = try CPace.scalarMultVfy(scalar: inputs.ya, point: yb)
        var withTopBit = yb
        withTopBit[31] |= 0x80
        #expect(try CPace.scalarMultVfy(scalar: inputs.ya, point: withTopBit) == k)
        // u and u + p denote the same field element; for u = 9 (the X25519 base point) u + p is still below 2^255.
        let nine = [9] + [UInt8](repeating: 0, count: 31)
        let ninePlusP = ReferenceField.bytes(ReferenceField.add(ReferenceField.digits(nine), ReferenceField.p))
        #expect(ninePlusP[31] == 0x7F && ninePlusP[0] == 0xF6)
        let expected = try CPace.scalarMultVfy(scalar: inputs.ya, point: nine)
        #expect(try CPace.scalarMultVfy(scalar: inputs.ya, point: ninePlusP) == expected)
        var nineWithTopBit = nine
        nineWithTopBit[31] |= 0x80
        #expect(try CPace.scalarMultVfy(scalar: inputs.ya, point: nineWithTopBit) == expected)
    }
}
