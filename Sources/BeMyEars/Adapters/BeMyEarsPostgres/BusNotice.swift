import CanonicalJSON
import Foundation

/// One notification on the cluster channel: a one-line JSON header, then (for a forwarded message carried inline)
/// a newline and the message's text exactly as the sending hub encoded it.
///
/// Every notice names its sender (`src`), the sender's run (`ep`, random per bus instance) and its place in the
/// sender's sequence (`seq`, 1, 2, …), so a receiver can drop duplicates (a batch repeated after an uncertain
/// commit) and notice gaps (notifications lost while its `LISTEN` connection was down).
struct BusNotice: Hashable, Sendable {
    enum Kind: String, Codable, Sendable {
        /// A message for a session of `target`, inline after the header.
        case forward = "f"
        /// A message for a session of `target`, too large for a notification: its text is the body of row `payload`
        /// of `bemyears_bus_payloads`.
        case stored = "r"
        /// The set of AVAILABLE interpreters changed.
        case presence = "p"
        /// The sender's periodic echo: proves to the sender that its `LISTEN` connection still receives.
        case echo = "e"
    }

    /// PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
    static let maximumPayloadBytes = 7_999

    var source: String
    var epoch: String
    var sequence: UInt64
    var kind: Kind
    var target: String?
    var session: UUID?
    var payload: UUID?
    /// The message text (``Kind/forward`` only).
    var text: String?

    private struct Header: Codable {
        var v: Int
        var src: String
        var ep: String
        var seq: UInt64
        var k: Kind
        var dst: String?
        var s: UUID?
        var id: UUID?
    }

    /// The notification payload.
    func encoded() throws -> String {
        let header = Header(v: 1, src: source, ep: epoch, seq: sequence, k: kind, dst: target, s: session, id: payload)
        let line = try JSONValueEncoder().encode(header).canonicalString
        guard kind == .forward, let text else { return line }
        return line + "\n" + text
    }

    /// Parses a notification payload; nil for anything this version does not understand.
    init?(decoding payload: String) {
        let bytes = Array(payload.utf8)
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        guard let value = try? JSONParser().parse(bytes[..<newline]),
            let header = try? JSONValueDecoder().decode(Header.self, from: value), header.v == 1
        else { return nil }
        self.init(
            source: header.src,
            epoch: header.ep,
            sequence: header.seq,
            kind: header.k,
            target: header.dst,
            session: header.s,
            payload: header.id,
            text: newline < bytes.endIndex ? String(decoding: bytes[(newline + 1)...], as: UTF8.self) : nil
        )
        switch kind {
        case .forward: guard target != nil, session != nil, text != nil else { return nil }
        case .stored: guard target != nil, session != nil, self.payload != nil else { return nil }
        case .presence, .echo: break
        }
    }

    init(
        source: String,
        epoch: String,
        sequence: UInt64,
        kind: Kind,
        target: String? = nil,
        session: UUID? = nil,
        payload: UUID? = nil,
        text: String? = nil
    ) {
        self.source = source
        self.epoch = epoch
        self.sequence = sequence
        self.kind = kind
        self.target = target
        self.session = session
        self.payload = payload
        self.text = text
    }
}
