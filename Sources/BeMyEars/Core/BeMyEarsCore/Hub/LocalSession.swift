import Foundation

/// The per-connection part of the protocol for one session held by this node, as a pure state machine: what
/// happens to a text frame before any shared state is involved (size, rate limit, parsing, registration gate,
/// role rules), the session's work queue, and which call the client has been told about.
///
/// The hub owns one per session and performs what it returns.
struct LocalSession {
    enum Phase: Hashable {
        /// Connected; only REGISTER is accepted.
        case connected
        case registered(Username, Role)
    }

    /// The call the client was told about (CALL_RINGING or CALL_REQUEST) and not yet told has ended.
    struct KnownCall: Hashable {
        var id: CallID
        var peer: Username
    }

    /// How a session ends.
    struct Termination: Hashable {
        /// DISCONNECTED or HEARTBEAT_EXPIRED: the reason its call ends with.
        var reason: CallEndReason
        /// ERROR to send before closing.
        var notice: SignalingError?
        /// Close the socket with this code (nil: the client already closed it).
        var close: CloseCode?

        static let disconnected = Termination(reason: .disconnected)
        static let heartbeatExpired = Termination(reason: .heartbeatExpired, close: .heartbeatExpired)
    }

    /// Work for the session, handled strictly in order, one at a time.
    enum WorkItem: Hashable {
        case message(String)
        case terminate(Termination)
    }

    /// What to do with an arriving text frame.
    enum Admission: Hashable {
        /// Queued for handling.
        case queued
        /// Refused with RATE_LIMITED; `firstInRun` is true for the first refusal after an accepted message.
        case rateLimited(firstInRun: Bool)
        /// Too large: ERROR PROTOCOL_ERROR and close 1009.
        case tooLarge(SignalingError)
    }

    /// What a queued frame is, once parsed and checked against the session's phase and role.
    enum Interpretation: Hashable {
        case handle(ClientMessage, callId: String?)
        /// Answer ERROR; the socket stays open.
        case reject(SignalingError, callId: String?)
        /// Answer ERROR and close.
        case close(SignalingError, CloseCode)
    }

    let id: SessionID
    private(set) var phase: Phase = .connected
    private(set) var lastActivity: Date
    private(set) var isClosing = false
    private var bucket: TokenBucket
    private var isRateLimited = false
    private var inbox: [WorkItem] = []
    private var inboxHead = 0
    /// Whether a task is handling this session's queue (so that others only enqueue).
    var isDraining = false
    var knownCall: KnownCall?
    /// The interpreter list last sent in PRESENCE (callers only).
    var lastPresence: [Username]?
    /// A PRESENCE was held back until the client learns that its call ended.
    var presenceDeferred = false
    /// When the last PRESENCE was sent (callers only): the next waits for ``SignalingConfiguration/presenceInterval``.
    var presenceSentAt: Date?

    init(id: SessionID, now: Date, rateLimit: RateLimit) {
        self.id = id
        self.lastActivity = now
        self.bucket = TokenBucket(rateLimit, now: now)
    }

    var username: Username? {
        guard case .registered(let username, _) = phase else { return nil }
        return username
    }

    var role: Role? {
        guard case .registered(_, let role) = phase else { return nil }
        return role
    }

    /// Whether no application message arrived for `ttl` (any text frame counts, even a refused one).
    func isExpired(at now: Date, ttl: Duration) -> Bool {
        !isClosing && expiry(ttl: ttl) <= now
    }

    /// When the session expires unless a message arrives first.
    func expiry(ttl: Duration) -> Date {
        lastActivity.adding(ttl)
    }

    /// A text frame arrived at `now`.
    mutating func admit(_ text: String, at now: Date, maximumBytes: Int, maximumQueued: Int) -> Admission {
        lastActivity = max(lastActivity, now)
        let size = text.utf8.count
        guard size <= maximumBytes else {
            return .tooLarge(
                SignalingError(
                    code: .protocolError,
                    message: "This message is \(size) bytes; messages are limited to \(maximumBytes) bytes."
                )
            )
        }
        guard bucket.take(at: now), inbox.count - inboxHead < maximumQueued else {
            defer { isRateLimited = true }
            return .rateLimited(firstInRun: !isRateLimited)
        }
        isRateLimited = false
        inbox.append(.message(text))
        return .queued
    }

    /// Queues the end of the session after what is already queued; false if it is already ending.
    mutating func beginTermination(_ termination: Termination) -> Bool {
        guard !isClosing else { return false }
        isClosing = true
        inbox.append(.terminate(termination))
        return true
    }

    /// The next queued work item.
    mutating func nextWorkItem() -> WorkItem? {
        guard inboxHead < inbox.count else { return nil }
        let item = inbox[inboxHead]
        inboxHead += 1
        if inboxHead == inbox.count {
            inbox.removeAll(keepingCapacity: true)
            inboxHead = 0
        }
        return item
    }

    mutating func markRegistered(_ username: Username, _ role: Role) {
        phase = .registered(username, role)
    }

    /// Parses a queued frame and checks it against the registration gate and the role rules.
    func interpret(_ text: String, maximumBytes: Int) -> Interpretation {
        let envelope: Envelope
        do {
            envelope = try EnvelopeCodec.decode(text, maximumBytes: maximumBytes)
        } catch {
            let refusal = SignalingError(code: .protocolError, message: error.message)
            switch error.code {
            case .tooLarge: return .close(refusal, .messageTooBig)
            case .unknownType: return .reject(SignalingError(code: .unknownType, message: error.message), callId: nil)
            case .invalidField: return .reject(refusal, callId: nil)
            default: return .close(refusal, .protocolError)
            }
        }
        switch phase {
        case .connected:
            guard envelope.type == .register else {
                return .reject(
                    SignalingError(
                        code: .notRegistered,
                        message: "Register first: send REGISTER with your username and role (caller or interpreter)."
                    ),
                    callId: envelope.callId
                )
            }
        case .registered(let username, let role):
            if envelope.type == .register {
                return .reject(
                    SignalingError(
                        code: .badState,
                        message: "You are already registered as \"\(username)\"; reconnect to use another name."
                    ),
                    callId: nil
                )
            }
            guard role.maySend(envelope.type) else {
                return .reject(
                    SignalingError(code: .roleForbidden, message: Self.roleForbiddenMessage(envelope.type)),
                    callId: envelope.callId
                )
            }
        }
        do {
            return .handle(try ClientMessage(envelope), callId: envelope.callId)
        } catch {
            return .reject(error, callId: envelope.callId)
        }
    }

    /// Updates ``knownCall`` for a message about to be sent to this session; false when the message must not be
    /// sent because it repeats what the client already knows (a second CALL_ENDED or CALL_DECLINE for a call).
    mutating func track(_ envelope: Envelope) -> Bool {
        let callId = envelope.callId.flatMap(CallID.init)
        switch envelope.type {
        case .callRinging:
            if let callId, let peer = envelope.to.flatMap(Username.init) {
                knownCall = KnownCall(id: callId, peer: peer)
            }
        case .callRequest:
            if let callId, let peer = envelope.from.flatMap(Username.init) {
                knownCall = KnownCall(id: callId, peer: peer)
            }
        case .callEnded, .callDecline:
            guard let known = knownCall, known.id == callId else { return false }
            knownCall = nil
        default:
            break
        }
        return true
    }

    static func roleForbiddenMessage(_ type: MessageType) -> String {
        switch type {
        case .callRequest: "Interpreters cannot place calls; only callers send CALL_REQUEST."
        case .setState: "Only interpreters go online or offline (SET_STATE); callers have no state to set."
        case .callAccept, .callDecline: "Only the interpreter who is being called can accept or decline a call."
        default: ClientMessage.serverOnlyMessage(type)
        }
    }
}
