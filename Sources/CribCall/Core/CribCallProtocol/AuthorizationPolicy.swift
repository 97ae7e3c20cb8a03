/// Whether the monitor knows the client certificate presented in the TLS handshake.
public enum SessionTrust: Sendable, Hashable {
    /// The client certificate's fingerprint is in the trusted-listener list.
    case trusted
    /// Unknown client: pairing messages only.
    case untrusted
}

/// Which side of the control channel is receiving.
public enum ControlRole: Sendable, Hashable {
    /// The QUIC server: receives what listeners send.
    case monitor
    /// The QUIC client: receives what the monitor sends. The monitor is always authenticated by the pinned
    /// fingerprint, so a listener session is always trusted.
    case listener
}

/// What a session does with a received message before handling it.
public enum AuthorizationDecision: Sendable, Hashable {
    /// Hand the message to its handler.
    case process
    /// Answer with an ERROR of this code; then close the connection with the same code if `close` is true.
    case reject(ErrorCode, close: Bool, message: String)
}

/// PROTOCOL.md §4 as a pure function: what a session may receive, and what happens otherwise.
public enum AuthorizationPolicy {
    /// Decides how a received message is treated.
    ///
    /// On a monitor:
    /// - untrusted session: `PAIR_REQUEST`, `PIN_PAIRING_INIT`, `PIN_SUBMIT` are processed; any other known
    ///   type → UNAUTHORIZED and close; an unknown type → UNSUPPORTED_MESSAGE and close (limits probing).
    /// - trusted session: every type a listener sends is processed; an unknown type, or a type only a monitor
    ///   sends, → UNSUPPORTED_MESSAGE and the connection stays open.
    ///
    /// On a listener: every type a monitor sends is processed; anything else → UNSUPPORTED_MESSAGE, open.
    /// - Parameters:
    ///   - type: The message's known type, or nil for an unknown one.
    ///   - typeName: The wire type string (for the error message).
    ///   - role: Who is receiving.
    ///   - trust: The session's trust (ignored for `.listener`).
    public static func decide(
        type: ControlMessageType?,
        typeName: String,
        role: ControlRole,
        trust: SessionTrust
    ) -> AuthorizationDecision {
        switch role {
        case .monitor:
            switch (trust, type) {
            case (.untrusted, .some(let type)) where type.isPairingRequest:
                return .process
            case (.untrusted, .some):
                return .reject(
                    .unauthorized,
                    close: true,
                    message: "\(typeName) needs a paired device; pair first (QR code or PIN)"
                )
            case (.untrusted, .none):
                return .reject(.unsupportedMessage, close: true, message: "unknown message type \(quoted(typeName))")
            case (.trusted, .some(let type)) where type.isSentByListener:
                return .process
            case (.trusted, _):
                return .reject(
                    .unsupportedMessage,
                    close: false,
                    message: "message type \(quoted(typeName)) is not accepted by a monitor"
                )
            }
        case .listener:
            if let type, type.isSentByMonitor { return .process }
            return .reject(
                .unsupportedMessage,
                close: false,
                message: "message type \(quoted(typeName)) is not accepted by a listener"
            )
        }
    }

    /// Decides how a received message is treated (see `decide(type:typeName:role:trust:)`).
    public static func decide(_ message: ControlMessage, role: ControlRole, trust: SessionTrust)
        -> AuthorizationDecision
    {
        decide(type: message.type, typeName: message.typeName, role: role, trust: trust)
    }

    static func quoted(_ name: String) -> String {
        // Peer-chosen text goes back into an error message: keep it short.
        "\"" + String(name.prefix(64)) + "\""
    }
}
