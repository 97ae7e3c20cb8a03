public import CanonicalJSON
import Foundation
public import NIOCore

/// Turns frame payloads into `ControlMessage`s and back. Outgoing messages are always in RFC 8785 form.
public enum ControlMessageCodec {
    static let parser = JSONParser(limits: .init(maxDepth: 16, maxBytes: ControlFrame.maxPayloadLength))

    /// Decodes one frame payload.
    ///
    /// - Invalid UTF-8, invalid JSON, not an object, or no string `type` → PROTOCOL_ERROR.
    /// - A known type whose fields are missing or of the wrong kind → PROTOCOL_ERROR naming the field.
    /// - An unknown type → `.unknown` (the session decides: UNSUPPORTED_MESSAGE).
    /// - Throws: `ControlProtocolError` with `.protocolError`.
    public static func decode(payload: some Collection<UInt8>) throws(ControlProtocolError) -> ControlMessage {
        let value: JSONValue
        do {
            value = try parser.parse(payload)
        } catch {
            throw ControlProtocolError(.protocolError, "invalid JSON: \(error.message)")
        }
        guard case .object(let members) = value else {
            throw ControlProtocolError(.protocolError, "a control message must be a JSON object")
        }
        guard case .string(let typeName)? = members["type"] else {
            throw ControlProtocolError(.protocolError, "a control message needs a string \"type\" field")
        }
        guard let type = ControlMessageType(rawValue: typeName) else {
            return .unknown(type: typeName, body: value)
        }
        do {
            return try decode(type, from: value)
        } catch {
            throw ControlProtocolError(
                .protocolError,
                "malformed \(typeName): \(describe(error))",
                inReplyTo: typeName
            )
        }
    }

    /// Decodes one frame payload held in a `ByteBuffer`.
    public static func decode(payload: ByteBuffer) throws(ControlProtocolError) -> ControlMessage {
        try decode(payload: payload.readableBytesView)
    }

    /// The canonical (JCS) JSON bytes of a message.
    public static func encode(_ message: ControlMessage) -> [UInt8] {
        jsonValue(of: message).canonicalBytes()
    }

    /// Appends the frame of a message to `buffer`.
    /// - Throws: `ControlProtocolError` (`.internalError`) if the message is too large for one frame.
    public static func frame(_ message: ControlMessage, into buffer: inout ByteBuffer) throws(ControlProtocolError) {
        try ControlFrame.encode(payload: encode(message), into: &buffer)
    }

    /// The message as a JSON object with its `type`.
    public static func jsonValue(of message: ControlMessage) -> JSONValue {
        let body: JSONValue
        switch message {
        case .pairRequest(let m): body = encodeBody(m)
        case .pairAccepted(let m): body = encodeBody(m)
        case .pairRejected(let m): body = encodeBody(m)
        case .pinPairingInit(let m): body = encodeBody(m)
        case .pinRequired(let m): body = encodeBody(m)
        case .pinSubmit(let m): body = encodeBody(m)
        case .noiseEvent(let m): body = encodeBody(m)
        case .eventsSince(let m): body = encodeBody(m)
        case .startStreamRequest(let m): body = encodeBody(m)
        case .startStreamResponse(let m): body = encodeBody(m)
        case .endStream(let m), .pinStream(let m): body = encodeBody(m)
        case .streamEndingSoon(let m): body = encodeBody(m)
        case .webrtcOffer(let m), .webrtcAnswer(let m): body = encodeBody(m)
        case .webrtcIce(let m): body = encodeBody(m)
        case .ping(let m), .pong(let m): body = encodeBody(m)
        case .unpair(let m): body = encodeBody(m)
        case .unpaired(let m): body = encodeBody(m)
        case .error(let m): body = encodeBody(m)
        case .safetyStatus(let m): body = encodeBody(m)
        case .safetyAlert(let m): body = encodeBody(m)
        case .alertAction(let m): body = encodeBody(m)
        case .alertUpdated(let m): body = encodeBody(m)
        case .monitorState(let m): body = encodeBody(m)
        case .unknown(_, let value): return value
        }
        guard case .object(var members) = body else { return body }
        members["type"] = .string(message.typeName)
        return .object(members)
    }

    static func encodeBody(_ value: some Encodable) -> JSONValue {
        do {
            return try JSONValueEncoder().encode(value)
        } catch {
            // Message structs hold only strings, booleans, integers within ±2^53 and finite doubles (a confidence
            // is clamped to 0…1), which always encode.
            preconditionFailure("control message failed to encode: \(error)")
        }
    }

    static func decode(_ type: ControlMessageType, from value: JSONValue) throws -> ControlMessage {
        let decoder = JSONValueDecoder()
        switch type {
        case .pairRequest: return .pairRequest(try decoder.decode(PairRequest.self, from: value))
        case .pairAccepted: return .pairAccepted(try decoder.decode(PairAccepted.self, from: value))
        case .pairRejected: return .pairRejected(try decoder.decode(PairRejected.self, from: value))
        case .pinPairingInit: return .pinPairingInit(try decoder.decode(PinPairingInit.self, from: value))
        case .pinRequired: return .pinRequired(try decoder.decode(PinRequired.self, from: value))
        case .pinSubmit: return .pinSubmit(try decoder.decode(PinSubmit.self, from: value))
        case .noiseEvent: return .noiseEvent(try decoder.decode(NoiseEvent.self, from: value))
        case .eventsSince: return .eventsSince(try decoder.decode(EventsSince.self, from: value))
        case .startStreamRequest: return .startStreamRequest(try decoder.decode(StartStreamRequest.self, from: value))
        case .startStreamResponse:
            return .startStreamResponse(try decoder.decode(StartStreamResponse.self, from: value))
        case .endStream: return .endStream(try decoder.decode(StreamReference.self, from: value))
        case .pinStream: return .pinStream(try decoder.decode(StreamReference.self, from: value))
        case .streamEndingSoon: return .streamEndingSoon(try decoder.decode(StreamEndingSoon.self, from: value))
        case .webrtcOffer: return .webrtcOffer(try decoder.decode(SessionDescription.self, from: value))
        case .webrtcAnswer: return .webrtcAnswer(try decoder.decode(SessionDescription.self, from: value))
        case .webrtcIce: return .webrtcIce(try decoder.decode(IceCandidateMessage.self, from: value))
        case .ping: return .ping(try decoder.decode(Ping.self, from: value))
        case .pong: return .pong(try decoder.decode(Ping.self, from: value))
        case .unpair: return .unpair(try decoder.decode(Unpair.self, from: value))
        case .unpaired: return .unpaired(try decoder.decode(Unpaired.self, from: value))
        case .error: return .error(try decoder.decode(ErrorMessage.self, from: value))
        case .safetyStatus: return .safetyStatus(try decoder.decode(SafetyStatus.self, from: value))
        case .safetyAlert: return .safetyAlert(try decoder.decode(SafetyAlert.self, from: value))
        case .alertAction: return .alertAction(try decoder.decode(AlertAction.self, from: value))
        case .alertUpdated: return .alertUpdated(try decoder.decode(AlertUpdated.self, from: value))
        case .monitorState: return .monitorState(try decoder.decode(MonitorState.self, from: value))
        }
    }

    /// A short, peer-readable account of a decoding failure: which field and what was expected.
    static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty
                ? "(top level)"
                : codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
                    .joined(separator: ".")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing field \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(let type, let context):
            return "field \(path(context.codingPath)) must be \(type)"
        case DecodingError.valueNotFound(let type, let context):
            return "field \(path(context.codingPath)) must be a \(type), not null"
        case DecodingError.dataCorrupted(let context):
            return "field \(path(context.codingPath)): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }
}
