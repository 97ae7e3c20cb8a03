public import ControlTransport
public import CribCallProtocol
public import Logging
import NIOCore

/// PROTOCOL.md §4 enforced on one control connection: decoding, authorization, ERROR replies and closes.
///
/// The session reads frames until the connection ends:
/// - a framing violation reported by `inbound`, or a payload that does not decode, is answered with ERROR
///   `PROTOCOL_ERROR` and the connection is closed with code 1;
/// - every decoded message goes through `AuthorizationPolicy` with the trust as it is now (asked again for each
///   message, so revoking a listener takes effect on its next message); a rejected message is answered with ERROR
///   and, when the policy says so, the connection is closed with the same code;
/// - a processed message goes to the handler, whose actions are carried out in order.
///
/// Every ERROR is sent before the close, and `close` delivers what was sent first.
public struct ControlSession: Sendable {
    /// Handles one authorized message and says what to do about it.
    public typealias Handler = @Sendable (ControlMessage) async -> [ControlSession.Action]

    /// What a handler asks the session to do, in order.
    public enum Action: Sendable, Hashable {
        /// Send this message.
        case send(ControlMessage)
        /// Close the connection with this code and end the session (after the sends before it).
        case close(ErrorCode)
    }

    private let connection: any ControlConnection
    private let role: ControlRole
    private let trust: @Sendable () -> SessionTrust
    private let logger: Logger

    /// - Parameters:
    ///   - connection: The connection to serve; the session is the only reader of its `inbound`.
    ///   - role: Which side this session is (a monitor receives what listeners send, and vice versa).
    ///   - trust: Whether the peer is trusted, asked before every message. Ignored for `.listener`.
    ///   - logger: Told (debug) what the session refused and why, (trace) each message type; with the caller's
    ///     metadata (which connection).
    public init(
        connection: any ControlConnection,
        role: ControlRole,
        logger: Logger = Logger(label: "cribcall"),
        trust: @escaping @Sendable () -> SessionTrust
    ) {
        self.connection = connection
        self.role = role
        self.trust = trust
        self.logger = logger
    }

    /// Reads frames until the connection ends.
    ///
    /// If the task running the session is cancelled, the session closes the connection with code 0 (OK).
    /// - Parameter handler: Called with each message the policy lets through, one at a time, in order.
    /// - Returns: Why the connection ended, as reported by `connection.closed()`.
    public func run(handler: Handler) async -> ConnectionCloseReason {
        do {
            var frames = connection.inbound.makeAsyncIterator()
            // Checking before each wait as well: a frame queue may miss a cancellation that comes before it waits.
            while !Task.isCancelled, let payload = try await frames.next() {
                guard await handle(payload, handler: handler) == .continue else { return await connection.closed() }
            }
            if Task.isCancelled { await connection.close(.ok) }
        } catch let error as ControlProtocolError {
            await fail(error)
        } catch is CancellationError {
            await connection.close(.ok)
        } catch ControlTransportError.closed(let reason) {
            return reason
        } catch {
            // `inbound` throws nothing else by contract; a transport that does has failed us.
            await connection.close(.internalError)
        }
        return await connection.closed()
    }

    /// The ERROR message answering a protocol violation.
    /// - Parameter error: The violation found while reading a frame or decoding a message.
    /// - Returns: `ERROR` with the violation's code, name, message and `inReplyTo`.
    public static func errorFrame(for error: ControlProtocolError) -> ControlMessage {
        .error(error.errorMessage)
    }

    private enum Next {
        case `continue`
        case stop
    }

    /// Decodes, authorizes and handles one frame payload.
    private func handle(_ payload: ByteBuffer, handler: Handler) async -> Next {
        let message: ControlMessage
        do {
            message = try ControlMessageCodec.decode(payload: payload)
        } catch {
            await fail(error)
            return .stop
        }
        logger.trace("received \(Self.shown(message.typeName))")
        switch AuthorizationPolicy.decide(message, role: role, trust: trust()) {
        case .reject(let code, let close, let text):
            logger.debug("refused \(Self.shown(message.typeName)) with \(code)\(close ? ", closing" : ""): \(text)")
            guard await send(.error(code, text, inReplyTo: message.typeName)) else { return .stop }
            guard close else { return .continue }
            await connection.close(code)
            return .stop
        case .process:
            for action in await handler(message) {
                switch action {
                case .send(let reply):
                    guard await send(reply) else { return .stop }
                case .close(let code):
                    await connection.close(code)
                    return .stop
                }
            }
            return .continue
        }
    }

    /// A message type as a log may show it: the peer chose it (an unknown type is its text), so it is quoted with
    /// control characters escaped, and cut at 40 characters.
    static func shown(_ type: String) -> String {
        String(reflecting: String(type.prefix(40)))
    }

    /// Answers a protocol violation with its ERROR, then closes with its code.
    private func fail(_ error: ControlProtocolError) async {
        logger.debug("closing on a protocol violation (\(error.code)): \(error.message)")
        _ = await send(Self.errorFrame(for: error))
        await connection.close(error.code)
    }

    /// Sends a message; false when the connection is closed (or the message cannot be framed).
    private func send(_ message: ControlMessage) async -> Bool {
        do {
            try await connection.send(message)
            return true
        } catch let error as ControlProtocolError {
            // Our own message did not fit in a frame: a bug on this side, reported as such to the peer.
            _ = try? await connection.send(.error(.internalError, error.message))
            await connection.close(.internalError)
            return false
        } catch {
            return false
        }
    }
}
