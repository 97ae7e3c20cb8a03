import Crypto

/// Party B, the responder, of CPACE-X25519-SHA512 in the initiator–responder setting.
///
/// The responder is created from the initiator's message and finishes immediately:
///
/// ```swift
/// let responder = try CPaceResponder(prs: password, ci: channelID, sid: sessionID, ad: adB,
///                                    peerMessage: ya, peerAD: adA)
/// send(responder.message)            // Yb (32 bytes), with ADb
/// let key = responder.sessionKey     // ISK
/// ```
///
/// Its secret scalar yb is used once inside the initializer and not retained. The responder holds only the public
/// message Yb and the session key; its description and reflection are redacted.
public struct CPaceResponder: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Yb = X25519(yb, g): the 32-byte message to send to the initiator, together with ADb.
    public let message: [UInt8]

    /// ISK and the sid output; the same as the initiator's if both used the same PRS, CI, sid and messages.
    public let sessionKey: CPaceSessionKey

    /// Answers an initiator's message with a fresh random scalar.
    /// - Parameters:
    ///   - prs: the password-related string.
    ///   - ci: the channel identifier (must equal the initiator's).
    ///   - sid: the session identifier (must equal the initiator's); may be empty.
    ///   - ad: ADb, public associated data sent along with ``message``.
    ///   - ya: Ya, the initiator's 32-byte message.
    ///   - adA: ADa, the initiator's associated data as received.
    /// - Throws: ``CPaceError/invalidMessageLength(_:)`` if Ya is not 32 bytes; ``CPaceError/identityElement`` if
    ///   Ya is a low-order point (K = I), on which the draft requires aborting.
    public init(
        prs: [UInt8],
        ci: [UInt8],
        sid: [UInt8],
        ad: [UInt8] = [],
        peerMessage ya: [UInt8],
        peerAD adA: [UInt8] = []
    ) throws(CPaceError) {
        try self.init(
            prs: prs, ci: ci, sid: sid, ad: ad, peerMessage: ya, peerAD: adA,
            privateKey: Curve25519.KeyAgreement.PrivateKey()
        )
    }

    /// Answers with an injected scalar. **Test-only** (reached through `@testable import CPace`), for reproducing
    /// the draft's test vectors; a reused or predictable scalar breaks the protocol's security.
    /// - Parameters:
    ///   - prs: the password-related string.
    ///   - ci: the channel identifier.
    ///   - sid: the session identifier.
    ///   - ad: ADb.
    ///   - ya: Ya.
    ///   - adA: ADa.
    ///   - scalar: yb, 32 bytes little endian.
    /// - Throws: ``CPaceError/invalidScalarLength``, ``CPaceError/invalidMessageLength(_:)`` or
    ///   ``CPaceError/identityElement``.
    init(
        prs: [UInt8],
        ci: [UInt8],
        sid: [UInt8],
        ad: [UInt8] = [],
        peerMessage ya: [UInt8],
        peerAD adA: [UInt8] = [],
        scalar: [UInt8]
    ) throws(CPaceError) {
        try self.init(
            prs: prs, ci: ci, sid: sid, ad: ad, peerMessage: ya, peerAD: adA,
            privateKey: try CPace.privateKey(scalar)
        )
    }

    private init(
        prs: [UInt8],
        ci: [UInt8],
        sid: [UInt8],
        ad: [UInt8],
        peerMessage ya: [UInt8],
        peerAD adA: [UInt8],
        privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws(CPaceError) {
        // Validate the public input first: nothing secret is computed for a malformed message.
        guard ya.count == CPace.fieldSizeBytes else { throw .invalidMessageLength(ya.count) }
        let generator = CPace.calculateGenerator(prs: prs, ci: ci, sid: sid)
        let yb = CPace.scalarMult(privateKey, generator)
        let transcript = CPace.transcriptIR(messageA: ya, adA: adA, messageB: yb, adB: ad)
        self.sessionKey = try CPace.deriveSessionKey(
            scalar: privateKey, peerMessage: ya, sid: sid, transcript: transcript
        )
        self.message = yb
    }

    /// "CPaceResponder(<redacted>)": never the key.
    public var description: String { "CPaceResponder(<redacted>)" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without children, so `dump` and debuggers' reflection show no key material.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
