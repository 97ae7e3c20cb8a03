public import Crypto

/// The outcome of a successful CPace run: the intermediate session key ISK and the public session-identifier
/// output.
///
/// ISK is 64 bytes (SHA-512). Both parties obtain the same ISK if and only if they used the same PRS, CI and sid
/// and saw the same messages and associated data. The draft recommends deriving working keys from ISK with a KDF
/// (e.g. HKDF) and adding explicit key confirmation when perfect forward security or explicit authentication is
/// needed; this type does neither.
///
/// The key bytes are held in a swift-crypto `SymmetricKey` (zeroed when released) and never appear in
/// `description`, `debugDescription` or reflection (`dump`, `Mirror`).
public struct CPaceSessionKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// ISK as a swift-crypto symmetric key of 512 bits, e.g. for `HKDF<SHA256>.deriveKey(inputKeyMaterial:...)`.
    public let symmetricKey: SymmetricKey

    /// `sid_output = SHA-512(b"CPaceSidOutput" || transcript_ir(Ya, ADa, Yb, ADb))` (draft section 10.6): a
    /// public value, identical for both parties of an honest run, usable as a session identifier afterwards.
    public let sidOutput: [UInt8]

    init(key: SymmetricKey, sidOutput: [UInt8]) {
        self.symmetricKey = key
        self.sidOutput = sidOutput
    }

    /// "CPaceSessionKey(<redacted>)": never the key.
    public var description: String { "CPaceSessionKey(<redacted>)" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without children, so `dump` and debuggers' reflection show no key material.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
