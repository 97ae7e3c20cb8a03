import Crypto

/// The group environment G_X25519 with H = SHA-512 (draft sections 7 and 8.2): generator calculation, scalar
/// multiplication with identity detection, and the session-key hash. Internal: reached by tests via
/// `@testable import CPace`, and by ``CPaceInitiator`` / ``CPaceResponder``.
extension CPace {
    // MARK: - Hashing

    /// SHA-512 of the concatenation of the parts.
    static func sha512(_ parts: [UInt8]...) -> [UInt8] {
        var hasher = SHA512()
        for part in parts {
            hasher.update(data: part)
        }
        return Array(hasher.finalize())
    }

    // MARK: - calculate_generator (section 8.2)

    /// Runs `body` on `H.hash(generator_string(G.DSI, PRS, CI, sid, H.s_in_bytes), G.field_size_bytes)`, the first
    /// 32 bytes of the SHA-512 digest of the generator string.
    ///
    /// The generator string is streamed into the hash rather than assembled, so no extra copy of the password is
    /// made; the byte sequence hashed is exactly ``generatorString(dsi:prs:ci:sid:sInBytes:)``.
    static func withGeneratorStringHash<R>(
        prs: [UInt8],
        ci: [UInt8],
        sid: [UInt8],
        _ body: (ArraySlice<UInt8>) -> R
    ) -> R {
        var hasher = SHA512()
        let padding = zeroPaddingLength(dsiCount: dsi.count, prsCount: prs.count, sInBytes: hashBlockSizeBytes)
        hasher.update(data: prependLen(dsi) + leb128(prs.count))
        hasher.update(data: prs)
        hasher.update(data: leb128(padding) + [UInt8](repeating: 0, count: padding) + lvCat(ci, sid))
        let digest = Array(hasher.finalize())
        return body(digest[0..<fieldSizeBytes])
    }

    /// RFC 7748 `decodeUCoordinate(u, 255)`: little endian, bit 255 cleared; values in [p, 2^255) are kept as
    /// (non-canonical) representatives.
    /// - Parameter bytes: 32 bytes.
    /// - Returns: the field element.
    static func decodeUCoordinate(_ bytes: some RandomAccessCollection<UInt8>) -> FieldElement25519 {
        FieldElement25519(bytes: bytes)
    }

    /// RFC 7748 `encodeUCoordinate(u, 255)`: the canonical (fully reduced) 32-byte little-endian encoding.
    /// - Parameter element: the field element.
    /// - Returns: 32 bytes.
    static func encodeUCoordinate(_ element: FieldElement25519) -> [UInt8] {
        element.bytes
    }

    /// `G.calculate_generator(H, PRS, CI, sid)` for X25519 + SHA-512:
    /// gen_str → SHA-512 → first 32 bytes → decodeUCoordinate → Elligator 2 → encodeUCoordinate.
    ///
    /// Constant time in the password: SHA-512 and the field arithmetic have no data-dependent branches, and the
    /// only variable-time aspect is the password *length* (hidden for PRS up to 109 bytes by the zero padding).
    /// - Parameters:
    ///   - prs: the password-related string.
    ///   - ci: the channel identifier.
    ///   - sid: the session identifier.
    /// - Returns: the generator g, a canonical u-coordinate (secret: it is derived from the password).
    static func calculateGenerator(prs: [UInt8], ci: [UInt8], sid: [UInt8]) -> [UInt8] {
        let u = withGeneratorStringHash(prs: prs, ci: ci, sid: sid) { decodeUCoordinate($0) }
        return encodeUCoordinate(Elligator2.mapToCurve(u))
    }

    // MARK: - scalar_mult / scalar_mult_vfy (section 8.2)

    /// X25519(scalar, point), reporting the neutral element as an error instead of returning zero bytes.
    ///
    /// swift-crypto computes X25519 with BoringSSL on Linux and with CryptoKit on Apple platforms. Both return the
    /// all-zero output for low-order inputs without throwing (swift-crypto deliberately ignores BoringSSL's
    /// "all-zero" return code to match CryptoKit), so the result is checked here: the 32 bytes are OR-ed together
    /// in a fixed-length loop and compared once. Should a future swift-crypto throw for that case instead, the
    /// error is treated the same way: X25519 on 32-byte inputs has no other failure mode. Non-canonical inputs
    /// (bit 255 set, or u ≥ p) are handled by X25519 itself, which clears bit 255 and reduces mod p (RFC 7748).
    /// - Parameters:
    ///   - scalar: the secret scalar (clamped by X25519).
    ///   - point: a 32-byte u-coordinate.
    /// - Returns: the 32 bytes of K (secret: keep them short-lived and never expose them).
    /// - Throws: ``CPaceError/identityElement`` when the result is G.I.
    static func x25519Vfy(
        _ scalar: Curve25519.KeyAgreement.PrivateKey,
        _ point: [UInt8]
    ) throws(CPaceError) -> [UInt8] {
        precondition(point.count == fieldSizeBytes, "callers validate the point length")
        let k: [UInt8]
        do {
            let peer = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: point)
            k = try bytes(of: try scalar.sharedSecretFromKeyAgreement(with: peer))
        } catch {
            throw .identityElement
        }
        var accumulator: UInt8 = 0
        for byte in k {
            accumulator |= byte
        }
        // The only data-dependent decision is "is K the identity", which is the public abort outcome.
        guard accumulator != 0 else { throw .identityElement }
        return k
    }

    /// The 32 bytes of an X25519 shared secret, read through public, pointer-free swift-crypto API.
    ///
    /// swift-crypto exposes `SharedSecret` bytes only through a raw-pointer closure (it is `ContiguousBytes`, not a
    /// `Sequence`). An X25519 *private key* however accepts any 32 `ContiguousBytes` and hands them back unchanged
    /// as `rawRepresentation` (clamping happens inside X25519, not on storage), so the secret is passed through
    /// one. The only error is a length other than 32 bytes, which X25519 output never has. The round trip is
    /// pinned by `CPaceTests` (arbitrary bytes, including unclamped ones, and every K test vector).
    /// - Parameter secret: an X25519 shared secret (32 bytes).
    /// - Returns: the secret's bytes.
    /// - Throws: swift-crypto's key-size error if the secret is not 32 bytes long.
    static func bytes(of secret: SharedSecret) throws -> [UInt8] {
        Array(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret).rawRepresentation)
    }

    /// `G.scalar_mult_vfy(y, X)` = X25519(y, X), reporting the neutral element as an error.
    /// - Parameters:
    ///   - scalar: 32 bytes.
    ///   - point: 32 bytes, any u-coordinate encoding (bit 255 is ignored).
    /// - Returns: the 32-byte shared u-coordinate K.
    /// - Throws: ``CPaceError/identityElement`` if K = G.I, ``CPaceError/invalidScalarLength`` or
    ///   ``CPaceError/invalidMessageLength(_:)`` for wrong input lengths.
    static func scalarMultVfy(scalar: [UInt8], point: [UInt8]) throws(CPaceError) -> [UInt8] {
        let key = try privateKey(scalar)
        guard point.count == fieldSizeBytes else { throw .invalidMessageLength(point.count) }
        return try x25519Vfy(key, point)
    }

    /// `G.scalar_mult(y, g)` = X25519(y, g); returns G.I (32 zero bytes) for a low-order g, as the draft's
    /// definition does (the peer then aborts).
    /// - Parameters:
    ///   - scalar: the secret scalar.
    ///   - point: a 32-byte u-coordinate.
    /// - Returns: the 32-byte result.
    static func scalarMult(_ scalar: Curve25519.KeyAgreement.PrivateKey, _ point: [UInt8]) -> [UInt8] {
        do {
            return try x25519Vfy(scalar, point)
        } catch {
            return identity
        }
    }

    /// Wraps 32 scalar bytes as an X25519 private key.
    /// - Parameter scalar: the little-endian scalar.
    /// - Returns: the key.
    /// - Throws: ``CPaceError/invalidScalarLength`` unless the scalar has 32 bytes.
    static func privateKey(_ scalar: [UInt8]) throws(CPaceError) -> Curve25519.KeyAgreement.PrivateKey {
        guard scalar.count == fieldSizeBytes,
            let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: scalar)
        else { throw .invalidScalarLength }
        return key
    }

    // MARK: - ISK (section 7.2)

    /// `ISK = H.hash(lv_cat(G.DSI || b"_ISK", sid, K) || transcript)`, streamed into the hash.
    /// - Parameters:
    ///   - sid: the session identifier.
    ///   - k: the 32 bytes of K.
    ///   - transcript: the protocol transcript.
    /// - Returns: the 64-byte ISK as a symmetric key.
    static func isk(sid: [UInt8], k: some Collection<UInt8>, transcript: [UInt8]) -> SymmetricKey {
        var hasher = SHA512()
        hasher.update(data: prependLen(dsiISK) + prependLen(sid) + leb128(k.count))
        hasher.update(data: Array(k))
        hasher.update(data: transcript)
        return SymmetricKey(data: hasher.finalize())
    }

    /// One party's final step: K = scalar_mult_vfy(y, peer message), abort on I, then ISK and sid_output over
    /// the initiator–responder transcript.
    /// - Parameters:
    ///   - scalar: this party's secret scalar.
    ///   - peerMessage: the peer's 32-byte message (already length-checked).
    ///   - sid: the session identifier.
    ///   - transcript: transcript_ir(Ya, ADa, Yb, ADb).
    /// - Returns: the session key.
    /// - Throws: ``CPaceError/identityElement``.
    static func deriveSessionKey(
        scalar: Curve25519.KeyAgreement.PrivateKey,
        peerMessage: [UInt8],
        sid: [UInt8],
        transcript: [UInt8]
    ) throws(CPaceError) -> CPaceSessionKey {
        let key = isk(sid: sid, k: try x25519Vfy(scalar, peerMessage), transcript: transcript)
        return CPaceSessionKey(key: key, sidOutput: sidOutput(transcript: transcript))
    }
}
