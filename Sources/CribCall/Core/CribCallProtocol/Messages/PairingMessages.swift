// The pairing messages (seed 2.3, PROTOCOL.md §5–6). They are small records of one shape each, so they share a
// file by area instead of one file per type.

/// `PAIR_REQUEST` (listener → monitor): QR pairing, authenticated by the one-time token from the QR code.
public struct PairRequest: Sendable, Hashable, Codable {
    public var listenerId: String
    public var listenerName: String
    /// Base64 of the listener certificate's SubjectPublicKeyInfo DER.
    public var listenerPublicKey: String
    public var listenerCertFingerprint: String
    /// Base64 HMAC-SHA256(k, JCS(T)) (PROTOCOL.md §5).
    public var authTag: String

    public init(
        listenerId: String,
        listenerName: String,
        listenerPublicKey: String,
        listenerCertFingerprint: String,
        authTag: String
    ) {
        self.listenerId = listenerId
        self.listenerName = listenerName
        self.listenerPublicKey = listenerPublicKey
        self.listenerCertFingerprint = listenerCertFingerprint
        self.authTag = authTag
    }
}

/// `PAIR_ACCEPTED` (monitor → listener). The listener trusts the monitor only after checking `confirmTag`.
public struct PairAccepted: Sendable, Hashable, Codable {
    public var monitorId: String
    /// Base64 HMAC proving the monitor knew the QR token or completed the PAKE (PROTOCOL.md §5–6).
    public var confirmTag: String?

    public init(monitorId: String, confirmTag: String?) {
        self.monitorId = monitorId
        self.confirmTag = confirmTag
    }
}

/// `PAIR_REJECTED` (monitor → listener).
public struct PairRejected: Sendable, Hashable, Codable {
    /// Why pairing was refused. Extensible: an unknown reason from a newer monitor still decodes.
    public struct Reason: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidToken = Reason(rawValue: "INVALID_TOKEN")
        public static let fingerprintMismatch = Reason(rawValue: "FINGERPRINT_MISMATCH")
        public static let expired = Reason(rawValue: "EXPIRED")
        public static let invalidPIN = Reason(rawValue: "INVALID_PIN")
        public static let locked = Reason(rawValue: "LOCKED")
        public static let internalError = Reason(rawValue: "INTERNAL_ERROR")
    }

    public var reason: Reason
    public var attemptsRemaining: Int?

    public init(reason: Reason, attemptsRemaining: Int? = nil) {
        self.reason = reason
        self.attemptsRemaining = attemptsRemaining
    }
}

/// `PIN_PAIRING_INIT` (listener → monitor).
public struct PinPairingInit: Sendable, Hashable, Codable {
    public var listenerId: String
    public var listenerName: String
    public var protocolVersion: Int
    public var listenerCertFingerprint: String
    /// Base64 of 16 random bytes; part of the CPace sid.
    public var nonce: String

    public init(
        listenerId: String,
        listenerName: String,
        protocolVersion: Int,
        listenerCertFingerprint: String,
        nonce: String
    ) {
        self.listenerId = listenerId
        self.listenerName = listenerName
        self.protocolVersion = protocolVersion
        self.listenerCertFingerprint = listenerCertFingerprint
        self.nonce = nonce
    }
}

/// `PIN_REQUIRED` (monitor → listener): the monitor shows a PIN and sends its CPace message.
public struct PinRequired: Sendable, Hashable, Codable {
    public var pairingSessionId: String
    /// Base64 of Ya (32 bytes).
    public var pakeMsgA: String
    public var expiresInSec: Int
    public var maxAttempts: Int

    public init(pairingSessionId: String, pakeMsgA: String, expiresInSec: Int, maxAttempts: Int) {
        self.pairingSessionId = pairingSessionId
        self.pakeMsgA = pakeMsgA
        self.expiresInSec = expiresInSec
        self.maxAttempts = maxAttempts
    }
}

/// `PIN_SUBMIT` (listener → monitor).
public struct PinSubmit: Sendable, Hashable, Codable {
    public var pairingSessionId: String
    /// Base64 of Yb (32 bytes).
    public var pakeMsgB: String
    public var transcript: PairingTranscript
    /// Base64 HMAC-SHA256(kL, JCS(transcript)).
    public var authTag: String

    public init(pairingSessionId: String, pakeMsgB: String, transcript: PairingTranscript, authTag: String) {
        self.pairingSessionId = pairingSessionId
        self.pakeMsgB = pakeMsgB
        self.transcript = transcript
        self.authTag = authTag
    }
}

/// The PIN pairing transcript both sides authenticate (seed 2.3.2 step 6), serialized with JCS.
public struct PairingTranscript: Sendable, Hashable, Codable {
    public var monitorId: String
    public var listenerId: String
    public var listenerPublicKey: String
    public var listenerCertFingerprint: String
    public var monitorCertFingerprint: String
    public var pairingSessionId: String

    public init(
        monitorId: String,
        listenerId: String,
        listenerPublicKey: String,
        listenerCertFingerprint: String,
        monitorCertFingerprint: String,
        pairingSessionId: String
    ) {
        self.monitorId = monitorId
        self.listenerId = listenerId
        self.listenerPublicKey = listenerPublicKey
        self.listenerCertFingerprint = listenerCertFingerprint
        self.monitorCertFingerprint = monitorCertFingerprint
        self.pairingSessionId = pairingSessionId
    }
}

/// `UNPAIR` (listener → monitor): forget me.
public struct Unpair: Sendable, Hashable, Codable {
    public var listenerId: String
    public init(listenerId: String) { self.listenerId = listenerId }
}

/// `UNPAIRED` (monitor → listener): the listener has been forgotten.
public struct Unpaired: Sendable, Hashable, Codable {
    public var listenerId: String
    public init(listenerId: String) { self.listenerId = listenerId }
}
