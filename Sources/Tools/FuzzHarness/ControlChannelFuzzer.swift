import CanonicalJSON
import CribCallProtocol
import NIOCore

/// The body of the control-channel fuzz target: arbitrary bytes through the frame decoder, the strict JSON
/// parser and message decoding, checking invariants that must hold for every input. A violated invariant
/// traps, which libFuzzer reports as a crash with the input that caused it.
public enum ControlChannelFuzzer {
    /// Runs one input.
    public static func run(_ bytes: [UInt8]) {
        fuzzFrames(bytes)
        fuzzJSON(bytes)
    }

    /// The bytes as a control stream: decode frames until more data is needed or the peer is wrong.
    static func fuzzFrames(_ bytes: [UInt8]) {
        var buffer = ByteBuffer(bytes: bytes)
        var frames = 0
        while true {
            let before = buffer.readableBytes
            let payload: ByteBuffer?
            do {
                payload = try ControlFrame.decode(from: &buffer)
            } catch {
                precondition(error.code == .protocolError, "framing errors are PROTOCOL_ERROR")
                return
            }
            guard let payload else {
                precondition(buffer.readableBytes == before, "need-more-data must not consume")
                return
            }
            precondition(payload.readableBytes >= 1 && payload.readableBytes <= ControlFrame.maxPayloadLength)
            frames += 1
            checkMessage(payload)
            if frames > 64 { return }
        }
    }

    /// A decoded message re-encodes canonically and decodes to itself; a rejected one is a PROTOCOL_ERROR.
    static func checkMessage(_ payload: ByteBuffer) {
        let message: ControlMessage
        do {
            message = try ControlMessageCodec.decode(payload: payload)
        } catch {
            precondition(error.code == .protocolError, "undecodable payloads are PROTOCOL_ERROR")
            return
        }
        let encoded = ControlMessageCodec.encode(message)
        guard let again = try? ControlMessageCodec.decode(payload: encoded) else {
            preconditionFailure("a decoded message must re-decode after encoding")
        }
        precondition(again == message, "encode/decode must round-trip")
        precondition(ControlMessageCodec.encode(again) == encoded, "encoding must be deterministic")
        var framed = ByteBuffer()
        if (try? ControlMessageCodec.frame(message, into: &framed)) != nil {
            precondition(framed.readableBytes == encoded.count + 4)
        }
        // The authorization policy is total: every message gets a decision in every role.
        for role in [ControlRole.monitor, .listener] {
            for trust in [SessionTrust.trusted, .untrusted] {
                _ = AuthorizationPolicy.decide(message, role: role, trust: trust)
            }
        }
    }

    /// The bytes as a JSON document: if accepted, canonical form is a fixed point and parses to the same value.
    static func fuzzJSON(_ bytes: [UInt8]) {
        let parser = JSONParser(limits: .init(maxDepth: 64, maxBytes: 1 << 20))
        guard let value = try? parser.parse(bytes) else { return }
        let canonical = value.canonicalBytes()
        guard let reparsed = try? parser.parse(canonical) else {
            preconditionFailure("canonical output must parse")
        }
        precondition(reparsed == value, "canonical output must parse to the same value")
        precondition(reparsed.canonicalBytes() == canonical, "canonicalization must be idempotent")
    }
}
