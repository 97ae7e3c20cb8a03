/// CPACE-X25519-SHA512 as specified in draft-irtf-cfrg-cpace-21: suite constants and the public string utilities.
///
/// The protocol itself is run with ``CPaceInitiator`` (party A) and ``CPaceResponder`` (party B). This namespace
/// holds the encoding helpers of the draft's Appendix A (`prepend_len`, `lv_cat`, `generator_string`, `o_cat`,
/// `transcript_ir`, `transcript_oc`) and the optional session-identifier output of section 10.6. They are pure
/// functions of public or caller-owned data and are exposed so that applications can build CI and sid
/// encodings consistently. The group operations (`calculate_generator`, `scalar_mult_vfy`) are internal: the draft
/// forbids exposing the shared point K (section 10.3), and the protocol types are the supported entry point.
public enum CPace {
    /// The cipher-suite name, "CPACE-X25519-SHA512".
    public static let suiteName = "CPACE-X25519-SHA512"

    /// G_X25519.DSI, the domain-separation identifier b"CPace255".
    public static let dsi: [UInt8] = Array("CPace255".utf8)

    /// G.DSI || b"_ISK", the domain separator of the session-key hash: b"CPace255_ISK".
    public static let dsiISK: [UInt8] = Array("CPace255_ISK".utf8)

    /// The prefix of the optional session-identifier output: b"CPaceSidOutput".
    public static let sidOutputPrefix: [UInt8] = Array("CPaceSidOutput".utf8)

    /// G_X25519.field_size_bytes: the length of scalars, messages Ya/Yb and the point K.
    public static let fieldSizeBytes = 32

    /// H.s_in_bytes for SHA-512: the input block size used for the generator string's zero padding.
    public static let hashBlockSizeBytes = 128

    /// The length of the session key ISK and of the session-identifier output (SHA-512 digest length).
    public static let sessionKeyBytes = 64

    /// G_X25519.I, the neutral element as encoded by X25519: 32 zero bytes.
    public static let identity = [UInt8](repeating: 0, count: 32)

    // MARK: - String utilities (Appendix A.1 - A.3)

    /// The LEB128 encoding of a length: 7 bits per byte, least significant first, bit 7 set while more follow.
    /// - Parameter length: a non-negative length.
    /// - Returns: the encoding, one byte for lengths below 128.
    public static func leb128(_ length: Int) -> [UInt8] {
        precondition(length >= 0, "lengths are non-negative")
        var remaining = UInt(length)
        var encoded: [UInt8] = []
        repeat {
            let low = UInt8(remaining & 0x7F)
            remaining >>= 7
            encoded.append(remaining == 0 ? low : low | 0x80)
        } while remaining != 0
        return encoded
    }

    /// `prepend_len(data)`: the LEB128 length of `data` followed by `data`.
    /// - Parameter data: any octet string.
    /// - Returns: `LEB128(len(data)) || data`.
    public static func prependLen(_ data: [UInt8]) -> [UInt8] {
        leb128(data.count) + data
    }

    /// `lv_cat(a0, a1, ...)`: the concatenation of `prepend_len` of every argument.
    /// - Parameter parts: the octet strings, in order.
    /// - Returns: `prepend_len(a0) || prepend_len(a1) || ...`.
    public static func lvCat(_ parts: [UInt8]...) -> [UInt8] {
        lvCat(parts)
    }

    /// `lv_cat` over an array of octet strings.
    /// - Parameter parts: the octet strings, in order.
    /// - Returns: `prepend_len(parts[0]) || prepend_len(parts[1]) || ...`.
    public static func lvCat(_ parts: [[UInt8]]) -> [UInt8] {
        parts.reduce(into: []) { $0 += prependLen($1) }
    }

    /// The length of the zero padding in `generator_string`:
    /// `max(0, s_in_bytes − len(prepend_len(PRS)) − len(prepend_len(DSI)) − 1)`.
    static func zeroPaddingLength(dsiCount: Int, prsCount: Int, sInBytes: Int) -> Int {
        let prsField = leb128(prsCount).count + prsCount
        let dsiField = leb128(dsiCount).count + dsiCount
        return max(0, sInBytes - prsField - dsiField - 1)
    }

    /// `generator_string(DSI, PRS, CI, sid, s_in_bytes)` = `lv_cat(DSI, PRS, zero_bytes(len_zpad), CI, sid)`.
    ///
    /// The zero padding makes DSI, PRS and the padding fill the first hash block, so for short passwords the number
    /// of hashed bytes does not depend on the password length. The result contains the password: treat it as secret.
    /// - Parameters:
    ///   - dsi: the domain-separation identifier, by default ``dsi`` (b"CPace255").
    ///   - prs: the password-related string.
    ///   - ci: the channel identifier.
    ///   - sid: the session identifier (may be empty).
    ///   - sInBytes: the hash input block size, by default 128 (SHA-512).
    /// - Returns: the generator string.
    public static func generatorString(
        dsi: [UInt8] = CPace.dsi,
        prs: [UInt8],
        ci: [UInt8],
        sid: [UInt8],
        sInBytes: Int = CPace.hashBlockSizeBytes
    ) -> [UInt8] {
        let padding = zeroPaddingLength(dsiCount: dsi.count, prsCount: prs.count, sInBytes: sInBytes)
        return lvCat(dsi, prs, [UInt8](repeating: 0, count: padding), ci, sid)
    }

    /// `lexiographically_larger(bytes1, bytes2)` of the draft: byte-wise comparison, a proper prefix is smaller.
    /// - Parameters:
    ///   - lhs: the first octet string.
    ///   - rhs: the second octet string.
    /// - Returns: true when `lhs` sorts strictly after `rhs`.
    public static func lexicographicallyLarger(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        for (left, right) in zip(lhs, rhs) where left != right {
            return left > right
        }
        return lhs.count > rhs.count
    }

    /// `o_cat(bytes1, bytes2)`: b"oc" followed by the lexicographically larger string, then the other one.
    /// - Parameters:
    ///   - first: one octet string.
    ///   - second: the other octet string.
    /// - Returns: `b"oc" || max || min`.
    public static func oCat(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        let prefix = Array("oc".utf8)
        return lexicographicallyLarger(first, second) ? prefix + first + second : prefix + second + first
    }

    /// `transcript_ir(Ya, ADa, Yb, ADb)` = `lv_cat(Ya, ADa) || lv_cat(Yb, ADb)`, the initiator–responder transcript.
    /// - Parameters:
    ///   - messageA: Ya, the initiator's message.
    ///   - adA: ADa, the initiator's associated data.
    ///   - messageB: Yb, the responder's message.
    ///   - adB: ADb, the responder's associated data.
    /// - Returns: the transcript.
    public static func transcriptIR(messageA: [UInt8], adA: [UInt8], messageB: [UInt8], adB: [UInt8]) -> [UInt8] {
        lvCat(messageA, adA) + lvCat(messageB, adB)
    }

    /// `transcript_oc(Ya, ADa, Yb, ADb)` = `o_cat(lv_cat(Ya, ADa), lv_cat(Yb, ADb))`, the transcript of the
    /// symmetric (parallel) setting. Provided for completeness and the test vectors; ``CPaceInitiator`` and
    /// ``CPaceResponder`` use ``transcriptIR(messageA:adA:messageB:adB:)``.
    /// - Parameters:
    ///   - messageA: Ya.
    ///   - adA: ADa.
    ///   - messageB: Yb.
    ///   - adB: ADb.
    /// - Returns: the ordered transcript.
    public static func transcriptOC(messageA: [UInt8], adA: [UInt8], messageB: [UInt8], adB: [UInt8]) -> [UInt8] {
        oCat(lvCat(messageA, adA), lvCat(messageB, adB))
    }

    /// The optional public session-identifier output (section 10.6): `SHA-512(b"CPaceSidOutput" || transcript)`.
    /// - Parameter transcript: the protocol transcript, e.g. from ``transcriptIR(messageA:adA:messageB:adB:)``.
    /// - Returns: 64 bytes, unique for honest parties even when the sid input was empty.
    public static func sidOutput(transcript: [UInt8]) -> [UInt8] {
        sha512(sidOutputPrefix, transcript)
    }
}
