/// An interpreter's presence state (seed §5). Interpreters start UNAVAILABLE; only AVAILABLE ones appear in
/// PRESENCE and can be called.
public enum InterpreterState: String, Sendable, Hashable, CaseIterable, Codable {
    case unavailable = "UNAVAILABLE"
    case available = "AVAILABLE"
    case ringing = "RINGING"
    case inCall = "IN_CALL"

    /// Whether the interpreter is busy with a call (RINGING or IN_CALL): SET_STATE is refused then.
    public var isInCall: Bool { self == .ringing || self == .inCall }
}
