public import CribCallProtocol
public import DeviceIdentity

/// What the TLS handshake proved about the peer: its certificate, never a claim made in a message.
public struct PeerCertificate: Sendable, Hashable {
    /// SHA-256 of the peer certificate's DER.
    public var fingerprint: CertificateFingerprint
    /// The peer certificate's SubjectPublicKeyInfo DER.
    public var publicKeySPKI: [UInt8]
    /// The peer certificate's DER.
    public var certificateDER: [UInt8]

    public init(fingerprint: CertificateFingerprint, publicKeySPKI: [UInt8], certificateDER: [UInt8]) {
        self.fingerprint = fingerprint
        self.publicKeySPKI = publicKeySPKI
        self.certificateDER = certificateDER
    }
}

/// Why a connection ended.
public enum ConnectionCloseReason: Sendable, Hashable, CustomStringConvertible {
    /// This side closed with this application error code.
    case local(code: UInt64)
    /// The peer closed with this application error code (QUIC CONNECTION_CLOSE, type 0x1d).
    case peerApplication(code: UInt64, reason: String)
    /// The peer or the transport closed with a transport error (type 0x1c), e.g. a TLS alert.
    case transport(code: UInt64, reason: String)
    /// Nothing was heard for the idle timeout.
    case idleTimeout
    /// The endpoint shut down.
    case shutdown

    public var description: String {
        switch self {
        case .local(let code): "closed locally with code \(code)"
        case .peerApplication(let code, let reason):
            "peer closed with code \(code)\(reason.isEmpty ? "" : ": \(reason)")"
        case .transport(let code, let reason):
            "transport error 0x\(String(code, radix: 16))\(reason.isEmpty ? "" : ": \(reason)")"
        case .idleTimeout: "idle timeout"
        case .shutdown: "endpoint shut down"
        }
    }
}

/// Errors a transport reports to its user.
public enum ControlTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server's certificate fingerprint is not the pinned one; the handshake was aborted and nothing sent.
    case fingerprintMismatch(expected: CertificateFingerprint, actual: CertificateFingerprint)
    /// The handshake failed (TLS alert, ALPN refused, no certificate, timeout…).
    case handshakeFailed(String)
    /// The connection is closed; no more frames can be sent.
    case closed(ConnectionCloseReason)
    /// The address could not be used.
    case invalidAddress(String)

    public var description: String {
        switch self {
        case .fingerprintMismatch(let expected, let actual):
            "the monitor presented certificate \(actual.shortForm), not the paired \(expected.shortForm); "
                + "nothing was sent (if the monitor was reset, pair it again)"
        case .handshakeFailed(let reason): "handshake failed: \(reason)"
        case .closed(let reason): "connection closed (\(reason))"
        case .invalidAddress(let reason): "invalid address: \(reason)"
        }
    }
}

/// One mutually authenticated control connection: one control stream carrying length-prefixed frames
/// (PROTOCOL.md §2–3). Implemented by the QUIC adapter and by the in-memory twin.
public protocol ControlConnection: Sendable {
    /// The peer's certificate as proven in the handshake.
    var peer: PeerCertificate { get }

    /// The remote address as `HOST:PORT` (`[HOST]:PORT` for IPv6; an IPv4 peer of a dual-stack socket as IPv4): shown,
    /// logged, and what the PIN pairing's per-address limits are keyed on (its host).
    var remoteAddress: String { get }

    /// Frame payloads received on the control stream, in order. The sequence finishes when the connection
    /// closes; it throws `ControlProtocolError` (`.protocolError`) on a framing violation — the caller then
    /// answers with an ERROR frame and `close(code: 1)`. Taking a frame returns its flow-control credit to the
    /// peer, so a slow consumer slows the peer down instead of buffering without bound. Iterate it once.
    var inbound: ControlFrameSequence { get }

    /// Sends one frame carrying `payload` (1…262,144 bytes of JSON). Suspends while too much sent data is
    /// unacknowledged (backpressure).
    /// - Throws: `ControlTransportError.closed` once the connection is closed; `ControlProtocolError`
    ///   (`.internalError`) for an empty or oversize payload.
    func send(_ payload: [UInt8]) async throws

    /// Delivers what was sent (waiting briefly for the peer's acknowledgement), then closes with an application
    /// error code (QUIC CONNECTION_CLOSE type 0x1d). Idempotent.
    func close(code: UInt64) async

    /// Waits until the connection has ended and says why.
    func closed() async -> ConnectionCloseReason

    /// The peer is trusted (a paired listener): the transport stops counting this connection against the limits
    /// for strangers and never closes it to make room for one. Idempotent.
    func markTrusted()
}

extension ControlConnection {
    /// Transports without admission limits (in-memory, client side) have nothing to do.
    public func markTrusted() {}
}

extension ControlConnection {
    /// Encodes a message in JCS form and sends it as one frame.
    public func send(_ message: ControlMessage) async throws {
        try await send(ControlMessageCodec.encode(message))
    }

    /// Closes with a protocol error code.
    public func close(_ code: ErrorCode) async {
        await close(code: UInt64(code.rawValue))
    }
}

/// A server endpoint accepting control connections (the monitor).
public protocol ControlListener: Sendable {
    /// The bound port (useful when asked for port 0).
    var port: Int { get }
    /// Connections whose handshake completed, in order.
    var connections: AsyncStream<any ControlConnection> { get }
    /// Closes every connection (code 0) and stops listening.
    func shutdown() async
}

/// A client endpoint (the listener app) opening control connections to monitors.
public protocol ControlConnector: Sendable {
    /// Connects and completes the handshake, verifying inside it that the server's certificate fingerprint is
    /// `pinnedFingerprint`. On mismatch the handshake is aborted and no application data is sent.
    /// - Throws: `ControlTransportError`.
    func connect(host: String, port: Int, pinnedFingerprint: CertificateFingerprint) async throws
        -> any ControlConnection
}
