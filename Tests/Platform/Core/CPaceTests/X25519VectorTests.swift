import Testing

@testable import CPace

/// Appendix B.1.1 - B.1.7: CPACE-X25519-SHA512 test vectors.
@Suite("CPACE-X25519-SHA512 vectors (draft Appendix B.1)")
struct X25519VectorTests {
    let file: VectorFile
    let inputs: SuiteInputs

    init() throws {
        file = try VectorFile.load()
        inputs = try SuiteInputs.load()
    }

    @Test("B.1 inputs parsed from the fixture agree with the B.1.8 C initializers")
    func inputsAreConsistent() throws {
        let c = try cInitializers()
        #expect(inputs.prs == c["tc_PRS"])
        #expect(inputs.ci == c["tc_CI"])
        #expect(inputs.sid == c["tc_sid"])
        #expect(inputs.ya == c["tc_ya"])
        #expect(inputs.yb == c["tc_yb"])
        #expect(inputs.adA == c["tc_ADa"])
        #expect(inputs.adB == c["tc_ADb"])
        #expect(try file.hexBlock("generator g:", after: "B.1.1.") == c["tc_g"])
        #expect(try file.hexBlock("ISK result:", after: "B.1.5.") == c["tc_ISK_IR"])
        #expect(try file.hexBlock("ISK result:", after: "B.1.6.") == c["tc_ISK_SY"])
    }

    @Test("B.1.1 generator string, its hash, the decoded field element and g")
    func calculateGenerator() throws {
        let generatorString = CPace.generatorString(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid)
        #expect(generatorString == (try file.hexBlock("generator_string(G.DSI,PRS,CI,sid,H.s_in_bytes):")))

        let expectedHash = try file.hexBlock("hash generator string:", after: "B.1.1.")
        #expect(Array(CPace.sha512(generatorString).prefix(32)) == expectedHash)
        // The streamed hash inside calculate_generator hashes exactly the same bytes.
        let streamed = CPace.withGeneratorStringHash(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid) { Array($0) }
        #expect(streamed == expectedHash)

        // decodeUCoordinate only clears bit 255 (this value is below p, so its canonical encoding is the same).
        let decoded = expectedHash.withUnsafeBytes { CPace.decodeUCoordinate($0) }
        #expect(CPace.encodeUCoordinate(decoded) == (try file.hexBlock("decoded field element of 255 bits:")))

        let g = CPace.calculateGenerator(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid)
        #expect(g == (try file.hexBlock("generator g:", after: "B.1.1.")))
    }

    @Test("B.1.2 / B.1.3 messages Ya and Yb")
    func messages() throws {
        let g = CPace.calculateGenerator(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid)
        let expectedYa = try file.hexBlock("Ya:", after: "B.1.2.")
        let expectedYb = try file.hexBlock("Yb:", after: "B.1.3.")
        #expect(CPace.scalarMult(try CPace.privateKey(inputs.ya), g) == expectedYa)
        #expect(CPace.scalarMult(try CPace.privateKey(inputs.yb), g) == expectedYb)

        let initiator = try CPaceInitiator(prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, scalar: inputs.ya)
        #expect(initiator.message == expectedYa)
        let responder = try CPaceResponder(
            prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, peerMessage: expectedYa, scalar: inputs.yb
        )
        #expect(responder.message == expectedYb)
    }

    @Test("B.1.4 K = scalar_mult_vfy(ya, Yb) = scalar_mult_vfy(yb, Ya)")
    func sharedPoint() throws {
        let ya = try file.hexBlock("Ya:", after: "B.1.2.")
        let yb = try file.hexBlock("Yb:", after: "B.1.3.")
        #expect(try CPace.scalarMultVfy(scalar: inputs.ya, point: yb) == file.hexBlock("scalar_mult_vfy(ya,Yb):"))
        #expect(try CPace.scalarMultVfy(scalar: inputs.yb, point: ya) == file.hexBlock("scalar_mult_vfy(yb,Ya):"))
    }

    @Test("B.1.5 ISK initiator/responder through CPaceInitiator and CPaceResponder")
    func iskInitiatorResponder() throws {
        let ya = try file.hexBlock("Ya:", after: "B.1.2.")
        let yb = try file.hexBlock("Yb:", after: "B.1.3.")
        let k = try file.hexBlock("scalar_mult_vfy(ya,Yb):")
        let expectedISK = try file.hexBlock("ISK result:", after: "B.1.5.")

        // The intermediate strings.
        let transcript = CPace.transcriptIR(messageA: ya, adA: inputs.adA, messageB: yb, adB: inputs.adB)
        #expect(transcript == (try file.hexBlock("transcript_ir(Ya,ADa,Yb,ADb):", after: "B.1.5.")))
        #expect(CPace.dsiISK == (try file.hexBlock("DSI = G.DSI_ISK, b'CPace255_ISK':", after: "B.1.5.")))
        let hashInput = CPace.lvCat(CPace.dsiISK, inputs.sid, k) + transcript
        #expect(hashInput == (try file.hexBlock("lv_cat(DSI,sid,K)||transcript_ir(Ya,ADa,Yb,ADb):")))
        #expect(CPace.sha512(hashInput) == expectedISK)

        // The full API, both parties.
        let initiator = try CPaceInitiator(
            prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, ad: inputs.adA, scalar: inputs.ya
        )
        #expect(initiator.message == ya)
        let responder = try CPaceResponder(
            prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, ad: inputs.adB,
            peerMessage: initiator.message, peerAD: inputs.adA, scalar: inputs.yb
        )
        #expect(responder.message == yb)
        #expect(responder.sessionKey.bytes == expectedISK)

        let initiatorKey = try initiator.finish(peerMessage: responder.message, peerAD: inputs.adB)
        #expect(initiatorKey.bytes == expectedISK)
    }

    @Test("B.1.6 ISK for the parallel (ordered-concatenation) transcript")
    func iskParallel() throws {
        let ya = try file.hexBlock("Ya:", after: "B.1.2.")
        let yb = try file.hexBlock("Yb:", after: "B.1.3.")
        let k = try file.hexBlock("scalar_mult_vfy(ya,Yb):")
        let transcript = CPace.transcriptOC(messageA: ya, adA: inputs.adA, messageB: yb, adB: inputs.adB)
        #expect(transcript == (try file.hexBlock("transcript_oc(Ya,ADa,Yb,ADb):", after: "B.1.6.")))
        let hashInput = CPace.lvCat(CPace.dsiISK, inputs.sid, k) + transcript
        #expect(hashInput == (try file.hexBlock("lv_cat(DSI,sid,K)||transcript_oc(Ya,ADa,Yb,ADb):")))
        let isk = k.withUnsafeBytes { CPace.isk(sid: inputs.sid, k: $0, transcript: transcript) }
        let key = CPaceSessionKey(key: isk, sidOutput: [])
        #expect(key.bytes == (try file.hexBlock("ISK result:", after: "B.1.6.")))
    }

    @Test("B.1.7 optional session-identifier outputs")
    func sidOutputs() throws {
        let ya = try file.hexBlock("Ya:", after: "B.1.2.")
        let yb = try file.hexBlock("Yb:", after: "B.1.3.")
        let ir = CPace.transcriptIR(messageA: ya, adA: inputs.adA, messageB: yb, adB: inputs.adB)
        let oc = CPace.transcriptOC(messageA: ya, adA: inputs.adA, messageB: yb, adB: inputs.adB)
        let expectedIR = try file.hexBlock("H.hash(b\"CPaceSidOutput\" + transcript_ir(Ya,ADa, Yb,ADb)):")
        let expectedOC = try file.hexBlock("H.hash(b\"CPaceSidOutput\" + transcript_oc(Ya,ADa, Yb,ADb)):")
        #expect(CPace.sidOutput(transcript: ir) == expectedIR)
        #expect(CPace.sidOutput(transcript: oc) == expectedOC)

        // The protocol types report the initiator-responder sid output on both sides.
        let initiator = try CPaceInitiator(
            prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, ad: inputs.adA, scalar: inputs.ya
        )
        let responder = try CPaceResponder(
            prs: inputs.prs, ci: inputs.ci, sid: inputs.sid, ad: inputs.adB,
            peerMessage: initiator.message, peerAD: inputs.adA, scalar: inputs.yb
        )
        #expect(responder.sessionKey.sidOutput == expectedIR)
        let initiatorKey = try initiator.finish(peerMessage: responder.message, peerAD: inputs.adB)
        #expect(initiatorKey.sidOutput == expectedIR)
    }

    /// The B.1.8 `const unsigned char tc_X[] = { 0x.., ... };` initializers, by name.
    private func cInitializers() throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        var index = try file.lineIndex(containing: "B.1.8.")
        let end = try file.lineIndex(containing: "B.1.9.")
        while index < end {
            let line = file.lines[index]
            index += 1
            guard let name = line.slice(between: "const unsigned char ", and: "[]") else { continue }
            var bytes: [UInt8] = []
            while index < end, !file.lines[index].contains("};") {
                for token in file.lines[index].split(separator: ",") {
                    let trimmed = String(token).trimmingSpaces
                    if trimmed.hasPrefix("0x"), let byte = UInt8(trimmed.dropFirst(2), radix: 16) {
                        bytes.append(byte)
                    }
                }
                index += 1
            }
            result[name] = bytes
        }
        return result
    }
}

extension CPaceInitiator {
    /// Consumes the initiator and returns the error `finish` throws, or nil on success. (A non-copyable value
    /// cannot be consumed inside the closures that `#expect(throws:)` builds.)
    consuming func finishError(peerMessage: [UInt8], peerAD: [UInt8] = []) -> CPaceError? {
        do {
            _ = try finish(peerMessage: peerMessage, peerAD: peerAD)
            return nil
        } catch {
            return error
        }
    }
}

extension CPaceSessionKey {
    /// The ISK bytes, for comparisons in tests.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
