import TestSupport
import Testing

@testable import CPace

/// Full runs with random scalars, mismatched inputs, malformed messages and redaction.
@Suite("CPace protocol runs")
struct ProtocolTests {
    let prs = Array("correct horse battery staple".utf8)
    let ci = CPace.lvCat(Array("monitor-1".utf8), Array("parent-7".utf8))
    let sid: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 &* 37) }
    let adA = Array("ADa".utf8)
    let adB = Array("ADb".utf8)

    /// Runs A and B with possibly different inputs and returns both session keys.
    private func run(
        prsA: [UInt8], prsB: [UInt8], ciA: [UInt8]? = nil, ciB: [UInt8]? = nil,
        sidA: [UInt8]? = nil, sidB: [UInt8]? = nil, adSeenByB: [UInt8]? = nil
    ) throws -> (CPaceSessionKey, CPaceSessionKey) {
        let initiator = CPaceInitiator(prs: prsA, ci: ciA ?? ci, sid: sidA ?? sid, ad: adA)
        #expect(initiator.message.count == 32)
        let responder = try CPaceResponder(
            prs: prsB, ci: ciB ?? ci, sid: sidB ?? sid, ad: adB,
            peerMessage: initiator.message, peerAD: adSeenByB ?? adA
        )
        #expect(responder.message.count == 32)
        let keyA = try initiator.finish(peerMessage: responder.message, peerAD: adB)
        return (keyA, responder.sessionKey)
    }

    @Test("same PRS, CI and sid: both parties derive the same 64-byte ISK and sid output")
    func agreement() throws {
        let (keyA, keyB) = try run(prsA: prs, prsB: prs)
        #expect(keyA.bytes.count == 64)
        #expect(keyA.bytes == keyB.bytes)
        #expect(keyA.sidOutput == keyB.sidOutput)
        #expect(keyA.sidOutput.count == 64)
        // Fresh scalars every run: a second run gives a different key.
        let (again, _) = try run(prsA: prs, prsB: prs)
        #expect(again.bytes != keyA.bytes)
    }

    @Test("empty sid and empty associated data still agree")
    func emptyOptionalInputs() throws {
        let initiator = CPaceInitiator(prs: prs, ci: [], sid: [])
        let responder = try CPaceResponder(prs: prs, ci: [], sid: [], peerMessage: initiator.message)
        let key = try initiator.finish(peerMessage: responder.message)
        #expect(key.bytes == responder.sessionKey.bytes)
    }

    @Test("different PRS, CI, sid or a tampered ADa: the keys differ")
    func disagreement() throws {
        let wrongPRS = try run(prsA: prs, prsB: Array("correct horse battery stapl3".utf8))
        #expect(wrongPRS.0.bytes != wrongPRS.1.bytes)
        let wrongCI = try run(prsA: prs, prsB: prs, ciB: CPace.lvCat(Array("monitor-2".utf8), Array("parent-7".utf8)))
        #expect(wrongCI.0.bytes != wrongCI.1.bytes)
        let wrongSID = try run(prsA: prs, prsB: prs, sidB: sid.reversed())
        #expect(wrongSID.0.bytes != wrongSID.1.bytes)
        let tamperedAD = try run(prsA: prs, prsB: prs, adSeenByB: Array("ADx".utf8))
        #expect(tamperedAD.0.bytes != tamperedAD.1.bytes)
        #expect(tamperedAD.0.sidOutput != tamperedAD.1.sidOutput)
    }

    @Test("messages of the wrong length are rejected before any secret computation")
    func invalidLengths() throws {
        for length in [0, 31, 33, 64] {
            let message = [UInt8](repeating: 9, count: length)
            let initiator = CPaceInitiator(prs: prs, ci: ci, sid: sid)
            let error = initiator.finishError(peerMessage: message)
            #expect(error == .invalidMessageLength(length))
            #expect(throws: CPaceError.invalidMessageLength(length)) {
                try CPaceResponder(prs: prs, ci: ci, sid: sid, peerMessage: message)
            }
        }
    }

    @Test("injected scalars must be 32 bytes")
    func invalidScalarLength() {
        #expect(throws: CPaceError.invalidScalarLength) {
            _ = try CPaceInitiator(prs: prs, ci: ci, sid: sid, scalar: [1, 2, 3])
        }
        #expect(throws: CPaceError.invalidScalarLength) {
            try CPaceResponder(
                prs: prs, ci: ci, sid: sid, peerMessage: [UInt8](repeating: 9, count: 32),
                scalar: [UInt8](repeating: 1, count: 33)
            )
        }
        #expect(throws: CPaceError.invalidScalarLength) { try CPace.scalarMultVfy(scalar: [], point: CPace.identity) }
    }

    @Test("descriptions, debug descriptions and dumps never contain the key")
    func redaction() throws {
        let initiator = CPaceInitiator(prs: prs, ci: ci, sid: sid, ad: adA)
        let responder = try CPaceResponder(prs: prs, ci: ci, sid: sid, ad: adB, peerMessage: initiator.message)
        let key = responder.sessionKey
        let keyHex = Hex.encode(key.bytes)
        // Any 8-byte window of the key, in hex, is enough to count as a leak.
        let windows = stride(from: 0, to: keyHex.count - 16, by: 2).map { offset in
            String(keyHex.dropFirst(offset).prefix(16))
        }
        var dumped = ""
        dump(key, to: &dumped)
        dump(responder, to: &dumped)
        let texts = [
            String(describing: key), String(reflecting: key), "\(key)",
            String(describing: responder), String(reflecting: responder), "\(responder)", dumped,
            String(describing: key.symmetricKey),
        ]
        for text in texts {
            #expect(!windows.contains { text.lowercased().contains($0) }, "\(text)")
            #expect(!text.contains(Hex.encode(prs)))
        }
        #expect(String(describing: key) == "CPaceSessionKey(<redacted>)")
        #expect(String(describing: responder) == "CPaceResponder(<redacted>)")
    }

    @Test("errors describe what went wrong without secrets")
    func errorDescriptions() {
        #expect(CPaceError.invalidMessageLength(31).description.contains("31"))
        #expect(CPaceError.identityElement.description.contains("identity"))
        #expect(!CPaceError.invalidScalarLength.description.isEmpty)
    }
}
