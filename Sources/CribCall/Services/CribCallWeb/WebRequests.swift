import CanonicalJSON
import CribCallProtocol
import CribCallStore
import Hummingbird

/// A JSON body the apps' API accepts, as a type: decoded strictly by CanonicalJSON's `JSONValueDecoder` (no type
/// conversions, an integer only from an integral number). A body that does not decode is refused with 400 and
/// ``shape``, what to send. Fields whose words are checked by the handler (an action, a kind, a media type) are
/// text here, so the refusal can list the words that work.
protocol WebRequestBody: Decodable, Sendable {
    /// What to send, as a refusal says it.
    static var shape: String { get }
}

extension WebAPI {
    /// Reads `request`'s JSON object (``withObject(_:limit:_:)``) as `Body` and hands it on.
    static func with<Body: WebRequestBody>(
        _ type: Body.Type, _ request: Request, limit: Int = maximumBodyBytes,
        _ handle: (Body) async throws -> Response
    ) async throws -> Response {
        try await withObject(request, limit: limit) { value in
            let body: Body
            do {
                body = try JSONValueDecoder().decode(Body.self, from: value)
            } catch {
                return refusal(.badRequest, Body.shape)
            }
            return try await handle(body)
        }
    }
}

/// Keys as they come, to tell a body with extra fields.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The listener's `POST /api/settings`: what a noise alert does, and nothing else.
struct OnNoiseChange: WebRequestBody {
    static let shape = #"send {"onNoise": "notify" or "open"}"#
    var onNoise: OnNoiseAction

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: AnyKey.self)
        guard fields.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "one field only"))
        }
        let text = try fields.decode(String.self, forKey: AnyKey(stringValue: "onNoise"))
        guard let action = OnNoiseAction(rawValue: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "notify or open"))
        }
        onNoise = action
    }
}

/// The listener's `POST /api/pair`: PIN pairing with a monitor found on the LAN.
struct PINPairingStart: WebRequestBody {
    static let shape = #"send {"host", "port", "fingerprint", "name"} of a monitor found on the LAN"#
    var host: String
    var port: Int
    var fingerprint: String
    var name: String?
}

/// The listener's `POST /api/pair/qr`: pairing by the text of a monitor's pairing code.
struct QRPairingStart: WebRequestBody {
    static let shape = #"send {"qr": the pairing code's text, "address": optional host[:port]}"#
    var qr: String
    var address: String?
}

/// The listener's `POST /api/pair/pin`: the PIN the monitor shows (an empty one is refused by the pairing).
struct PINEntry: WebRequestBody {
    static let shape = #"send {"pin": the 6 digits the monitor shows}"#
    var pin: String?
}

/// `POST /api/alerts/…/action` of both apps: checking, okay or mute.
struct AlertActionChoice: WebRequestBody {
    static let shape = "action must be checking, okay or mute"
    var action: String?
}

/// The monitor's `POST /api/trigger`: a safety alert raised by hand, to try the alerts.
struct TriggerRequest: WebRequestBody {
    static let shape = "kind must be one of \(SafetyAlertKind.known.map(\.rawValue).joined(separator: ", "))"
    var kind: String?
}

/// The listener's `POST /api/streams`: a stream from a paired monitor to the page.
struct StreamOpening: WebRequestBody {
    static let shape = #"send {"monitorId", "mediaType": audio or audio_video}"#
    var monitorId: String
    var mediaType: String?
}

/// The monitor's `POST /api/live`: its own live view.
struct LiveOpening: WebRequestBody {
    static let shape = "mediaType must be audio or audio_video"
    var mediaType: String?
}

/// A page's answer to a stream's offer (`POST /api/streams/…/answer`, `POST /api/live/…/answer`), with the
/// candidates it gathered (at most 64 are used).
struct PageAnswer: WebRequestBody {
    static let shape = #"send {"sdp": the answer, "candidates": [...]}"#

    /// One ICE candidate as a page gives it (`RTCIceCandidate.toJSON()`).
    struct Candidate: Decodable, Sendable {
        var candidate: String
        var sdpMid: String?
        var sdpMLineIndex: Int?
    }

    var sdp: String
    var candidates: [Candidate]?

    /// The candidates as the control protocol carries them (an m-line index beyond 64 is dropped).
    var iceCandidates: [IceCandidateMessage.Candidate] {
        (candidates ?? []).prefix(64).map {
            IceCandidateMessage.Candidate(
                candidate: $0.candidate, sdpMid: $0.sdpMid,
                sdpMLineIndex: $0.sdpMLineIndex.flatMap { (0...64).contains($0) ? $0 : nil })
        }
    }
}
