import CPace
import Testing

/// Appendix A.1 - A.3: prepend_len, lv_cat, ordered concatenation and the transcripts.
@Suite("String utilities (draft Appendix A)")
struct StringUtilityTests {
    /// (label in the fixture, input) for A.1.2.
    static let prependLenCases: [(String, [UInt8])] = [
        ("prepend_len(b\"\"):", []),
        ("prepend_len(b\"1234\"):", Array("1234".utf8)),
        ("prepend_len(bytes(range(127))):", (0..<127).map { UInt8($0) }),
        ("prepend_len(bytes(range(128))):", (0..<128).map { UInt8($0) }),
    ]

    @Test("A.1.2 prepend_len", arguments: prependLenCases)
    func prependLen(label: String, input: [UInt8]) throws {
        let expected = try VectorFile.load().hexBlock(label, after: "A.1.2.")
        #expect(CPace.prependLen(input) == expected)
    }

    @Test("LEB128 of larger lengths uses 7 bits per byte, least significant first")
    func leb128() {
        #expect(CPace.leb128(0) == [0x00])
        #expect(CPace.leb128(127) == [0x7F])
        #expect(CPace.leb128(128) == [0x80, 0x01])
        #expect(CPace.leb128(300) == [0xAC, 0x02])
        #expect(CPace.leb128(16_384) == [0x80, 0x80, 0x01])
    }

    @Test("A.1.4 lv_cat")
    func lvCat() throws {
        let expected = try VectorFile.load().hexBlock("lv_cat(b\"1234\",b\"5\",b\"\",b\"678\"):", after: "A.1.4.")
        let parts: [[UInt8]] = [Array("1234".utf8), Array("5".utf8), [], Array("678".utf8)]
        #expect(CPace.lvCat(parts) == expected)
        #expect(CPace.lvCat(parts[0], parts[1], parts[2], parts[3]) == expected)
    }

    @Test("A.3.3 lexicographical ordering")
    func lexicographicOrdering() throws {
        let cases = try VectorFile.load().lexicographicCases()
        #expect(cases.count == 6)
        for testCase in cases {
            #expect(
                CPace.lexicographicallyLarger(testCase.lhs, testCase.rhs) == testCase.expected,
                "\(testCase.lhs) vs \(testCase.rhs)"
            )
        }
    }

    static let oCatCases: [(String, String, String)] = [
        ("o_cat(b\"ABCD\",b\"BCD\"):", "ABCD", "BCD"),
        ("o_cat(b\"BCD\",b\"ABCDE\"):", "BCD", "ABCDE"),
    ]

    @Test("A.3.3 o_cat", arguments: oCatCases)
    func oCat(label: String, first: String, second: String) throws {
        let expected = try VectorFile.load().hexBlock(label, after: "A.3.3.")
        #expect(CPace.oCat(Array(first.utf8), Array(second.utf8)) == expected)
        #expect(CPace.oCat(Array(second.utf8), Array(first.utf8)) == expected, "o_cat is symmetric")
    }

    /// (label prefix, Ya, Yb) of A.3.5 / A.3.7; ADa = "PartyA", ADb = "PartyB" in all of them.
    static let transcriptCases: [(String, String, String)] = [
        ("(b\"123\", b\"PartyA\", b\"234\",b\"PartyB\"):", "123", "234"),
        ("(b\"3456\",b\"PartyA\",b\"2345\",b\"PartyB\"):", "3456", "2345"),
    ]

    @Test("A.3.5 transcript_ir", arguments: transcriptCases)
    func transcriptIR(label: String, messageA: String, messageB: String) throws {
        let expected = try VectorFile.load().hexBlock("transcript_ir" + label, after: "A.3.5.")
        let transcript = CPace.transcriptIR(
            messageA: Array(messageA.utf8), adA: Array("PartyA".utf8),
            messageB: Array(messageB.utf8), adB: Array("PartyB".utf8)
        )
        #expect(transcript == expected)
    }

    @Test("A.3.7 transcript_oc", arguments: transcriptCases)
    func transcriptOC(label: String, messageA: String, messageB: String) throws {
        let expected = try VectorFile.load().hexBlock("transcript_oc" + label, after: "A.3.7.")
        let transcript = CPace.transcriptOC(
            messageA: Array(messageA.utf8), adA: Array("PartyA".utf8),
            messageB: Array(messageB.utf8), adB: Array("PartyB".utf8)
        )
        #expect(transcript == expected)
    }

    @Test("generator_string zero padding: fills the first 128-byte block, none for long PRS")
    func generatorStringPadding() {
        // DSI field 9 bytes, PRS field 1 + n bytes, padding length prefix 1 byte: total exactly 128 for short PRS.
        for prsLength in [0, 1, 8, 100, 117] {
            let prs = [UInt8](repeating: 0x41, count: prsLength)
            let string = CPace.generatorString(prs: prs, ci: [], sid: [])
            #expect(string.count == 128 + 2, "PRS length \(prsLength)")
        }
        let longPRS = [UInt8](repeating: 0x41, count: 200)
        let string = CPace.generatorString(prs: longPRS, ci: [0x01], sid: [0x02])
        #expect(string == CPace.lvCat(CPace.dsi, longPRS, [], [0x01], [0x02]))
    }
}
