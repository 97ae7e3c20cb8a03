import Crypto

/// Party A, the initiator, of CPACE-X25519-SHA512 in the initiator–responder setting.
///
/// ```swift
/// let initiator = CPaceInitiator(prs: password, ci: channelID, sid: sessionID, ad: adA)
/// send(initiator.message)                                      // Ya (32 bytes), with ADa
/// let key = try initiator.finish(peerMessage: yb, peerAD: adB)  // ISK, or throws on abort
/// ```
///
/// The type is non-copyable and ``finish(peerMessage:peerAD:)`` consumes it, so the secret scalar ya is used for
/// exactly one key derivation (draft section 10.9: scalars must not be reused) and cannot be duplicated by
/// accident. Non-copyable types cannot be printed or reflected, so nothing secret leaks through descriptions.
/// The initiator keeps only ya, Ya, ADa and sid; the password and the generator are not retained.
public struct CPaceInitiator: ~Copyable, Sendable {
    /// ya, the secret scalar.
    private let scalar: Curve25519.KeyAgreement.PrivateKey
    /// The session identifier, needed again for ISK.
    private let sid: [UInt8]
    /// ADa, this party's associated data.
    private let ad: [UInt8]

    /// Ya = X25519(ya, g): the 32-byte message to send to the responder, together with ADa.
    public let message: [UInt8]

    /// Starts a session with a fresh random scalar.
    /// - Parameters:
    ///   - prs: the password-related string (e.g. a password encoded per RFC 8265, or a key derived from it).
    ///   - ci: the channel identifier; both parties must use the same value. Integrate the party identities here
    ///     (initiator first) as the draft recommends (section 10.1.1).
    ///   - sid: the session identifier, ideally fresh and agreed before the run; may be empty.
    ///   - ad: ADa, public associated data sent along with ``message`` and authenticated by the run.
    public init(prs: [UInt8], ci: [UInt8], sid: [UInt8], ad: [UInt8] = []) {
        // sample_scalar() = sample_random_bytes(32); swift-crypto draws them from the system CSPRNG.
        self.init(prs: prs, ci: ci, sid: sid, ad: ad, privateKey: Curve25519.KeyAgreement.PrivateKey())
    }

    /// Starts a session with an injected scalar. **Test-only** (reached through `@testable import CPace`), for
    /// reproducing the draft's test vectors; a reused or predictable scalar breaks the protocol's security.
    /// - Parameters:
    ///   - prs: the password-related string.
    ///   - ci: the channel identifier.
    ///   - sid: the session identifier.
    ///   - ad: ADa.
    ///   - scalar: ya, 32 bytes little endian.
    /// - Throws: ``CPaceError/invalidScalarLength`` unless `scalar` has 32 bytes.
    init(prs: [UInt8], ci: [UInt8], sid: [UInt8], ad: [UInt8] = [], scalar: [UInt8]) throws(CPaceError) {
        self.init(prs: prs, ci: ci, sid: sid, ad: ad, privateKey: try CPace.privateKey(scalar))
    }

    private init(prs: [UInt8], ci: [UInt8], sid: [UInt8], ad: [UInt8], privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.scalar = privateKey
        self.sid = sid
        self.ad = ad
        let generator = CPace.calculateGenerator(prs: prs, ci: ci, sid: sid)
        self.message = CPace.scalarMult(privateKey, generator)
    }

    /// Completes the session with the responder's reply and returns the session key.
    ///
    /// Computes K = X25519(ya, Yb), aborts if K is the identity, and returns
    /// ISK = SHA-512(lv_cat(b"CPace255_ISK", sid, K) || transcript_ir(Ya, ADa, Yb, ADb)).
    /// The initiator is consumed whether or not this succeeds: a failed run must be restarted from scratch.
    /// - Parameters:
    ///   - yb: Yb, the responder's 32-byte message.
    ///   - adB: ADb, the responder's associated data as received.
    /// - Returns: the session key (ISK) and the public sid output.
    /// - Throws: ``CPaceError/invalidMessageLength(_:)`` if Yb is not 32 bytes; ``CPaceError/identityElement`` if
    ///   Yb is a low-order point (K = I), which the draft requires to abort on.
    public consuming func finish(peerMessage yb: [UInt8], peerAD adB: [UInt8] = []) throws(CPaceError)
        -> CPaceSessionKey
    {
        guard yb.count == CPace.fieldSizeBytes else { throw .invalidMessageLength(yb.count) }
        let transcript = CPace.transcriptIR(messageA: message, adA: ad, messageB: yb, adB: adB)
        return try CPace.deriveSessionKey(scalar: scalar, peerMessage: yb, sid: sid, transcript: transcript)
    }
}
