import CanonicalJSON
import CribCallProtocol
import CribCallStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SafetyDetection

/// What the monitor's and the listener's apps share: JSON answers and refusals, reading a request's JSON, the
/// app's preferences, and the JSON of statuses and activity.
enum WebAPI {
    /// The largest request body the API reads by default (settings, preferences: a few hundred bytes).
    static let maximumBodyBytes = 16 * 1024

    static func answer(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.canonicalString)))
    }

    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        answer(["error": .string(message)], status: status)
    }

    /// A 503 for work the database failed: what could not be done, why, what did not happen, and what to do.
    static func storeRefusal(_ what: String, _ error: any Error, nothingDone: String) -> Response {
        refusal(
            .serviceUnavailable,
            "CribCall could not \(what) (\(error)); \(nothingDone). Check that the disk has space and that the data "
                + "directory can be written, then try again.")
    }

    /// Reads a JSON object body (at most ``maximumBodyBytes``, `Content-Type: application/json`) and hands it on;
    /// anything else is refused with what to send.
    static func withObject(
        _ request: Request, limit: Int = maximumBodyBytes, _ handle: (JSONValue) async throws -> Response
    ) async throws -> Response {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            return refusal(.unsupportedMediaType, "send JSON with Content-Type: application/json")
        }
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: limit)
        } catch {
            return refusal(.contentTooLarge, "the request is larger than \(limit) bytes")
        }
        let value: JSONValue
        do {
            value = try JSONParser(limits: .init(maxDepth: 8, maxBytes: limit)).parse(
                Array(bytes.readableBytesView))
        } catch {
            return refusal(.badRequest, "the body is not JSON: \(error)")
        }
        guard value.objectValue != nil else { return refusal(.badRequest, "the body must be a JSON object") }
        return try await handle(value)
    }

    /// Applies a partial `app` object to the stored preferences.
    /// - Returns: A 400 refusal saying what is wrong (nothing stored), or nil when stored.
    static func changePreferences(_ body: JSONValue, in database: CribCallDatabase) -> Response? {
        var problems: [String] = []
        do {
            try database.updateAppPreferences { preferences in
                for (key, value) in body.objectValue ?? [:] {
                    switch key {
                    case "disclaimerAccepted": set(&preferences.disclaimerAccepted, value, key, &problems)
                    case "setupComplete": set(&preferences.setupComplete, value, key, &problems)
                    case "babyName":
                        set(&preferences.babyName, value, key, &problems)
                        if preferences.babyName.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                            problems.append("the baby's name is required: 1 to 40 characters")
                        }
                    case "sleepLocation": set(&preferences.sleepLocation, value, key, &problems)
                    case "alertSound": set(&preferences.alertSound, value, key, &problems)
                    case "volume": set(&preferences.volume, value, key, &problems)
                    case "overrideSilentMode": set(&preferences.overrideSilentMode, value, key, &problems)
                    case "vibration": set(&preferences.vibration, value, key, &problems)
                    case "notifications": set(&preferences.notifications, value, key, &problems)
                    default: problems.append("unknown preference \(key.prefix(40))")
                    }
                }
                preferences.babyName = preferences.babyName.trimmingCharacters(in: .whitespacesAndNewlines)
                preferences.sleepLocation = preferences.sleepLocation.trimmingCharacters(in: .whitespacesAndNewlines)
                if let problem = problems.first { throw WebInputError(problem) }
            }
        } catch let error as WebInputError {
            return refusal(.badRequest, error.message)
        } catch {
            return refusal(.badRequest, "\(error)")
        }
        return nil
    }

    /// Sets `field` from a JSON value of its type, or notes the problem.
    static func set<T>(_ field: inout T, _ value: JSONValue, _ key: String, _ problems: inout [String]) {
        let converted: Any?
        switch T.self {
        case is Bool.Type: converted = value.boolValue
        case is String.Type: converted = value.stringValue
        case is Int.Type:
            converted = value.doubleValue.flatMap { $0 == $0.rounded() && abs($0) < 1e9 ? Int($0) : nil }
        default: converted = nil
        }
        guard let typed = converted as? T else {
            let kind = T.self == Bool.self ? "true or false" : T.self == Int.self ? "a whole number" : "text"
            problems.append("\(key) must be \(kind)")
            return
        }
        field = typed
    }

    static func json(_ candidate: IceCandidateMessage.Candidate) -> JSONValue {
        [
            "candidate": .string(candidate.candidate), "sdpMid": candidate.sdpMid.map { .string($0) } ?? .null,
            "sdpMLineIndex": candidate.sdpMLineIndex.map { .number(Double($0)) } ?? .null,
        ]
    }

    static func json(_ preferences: AppPreferences) -> JSONValue {
        [
            "disclaimerAccepted": .bool(preferences.disclaimerAccepted),
            "setupComplete": .bool(preferences.setupComplete), "babyName": .string(preferences.babyName),
            "sleepLocation": .string(preferences.sleepLocation), "alertSound": .string(preferences.alertSound),
            "volume": .number(Double(preferences.volume)),
            "overrideSilentMode": .bool(preferences.overrideSilentMode), "vibration": .string(preferences.vibration),
            "notifications": .bool(preferences.notifications),
        ]
    }

    static func json(_ status: SafetyStatus) -> JSONValue {
        [
            "monitoring": .string(status.monitoring.rawValue), "reason": status.reason.map { .string($0) } ?? .null,
            "movement": .string(status.movement.rawValue), "position": .string(status.position.rawValue),
            "faceVisible": status.faceVisible.map { .bool($0) } ?? .null,
            "updatedAt": .number(Double(status.updatedAt)),
            "line": .string(
                SafetyWording.status(
                    status.monitoring, reason: status.reason, movement: status.movement, position: status.position,
                    faceVisible: status.faceVisible)),
        ]
    }

    static func json(_ item: ActivityItem) -> JSONValue {
        [
            "timestamp": .number(Double(item.timestamp)), "kind": .string(item.kind), "title": .string(item.title),
            "detail": .string(item.detail), "tone": .string(item.tone.rawValue),
            "monitorName": item.monitorName.map { .string($0) } ?? .null,
        ]
    }

    /// An alert with its words, buttons and how it stands (`open` until someone acts).
    static func json(_ alert: SafetyAlert, update: AlertUpdated?, babyName: String? = nil) -> JSONValue {
        let words = SafetyWording.alert(alert.kind, babyName: babyName)
        var buttons: [JSONValue] = SafetyWording.buttons(alert.kind).map {
            ["action": .string($0.button.rawValue), "label": .string($0.label)]
        }
        if alert.kind == .crying { buttons.append(["action": "dismiss", "label": "Dismiss"]) }
        return [
            "alertId": .string(alert.alertId), "kind": .string(alert.kind.rawValue),
            "severity": .string(alert.severity.rawValue),
            "tag": .string(SafetyWording.tag(alert.kind, severity: alert.severity)),
            "title": .string(words.title), "body": .string(words.detail),
            "detectedAt": .number(Double(alert.detectedAt)),
            "confidence": .number((alert.confidence * 1000).rounded() / 1000), "detector": .string(alert.detector),
            "state": .string(update?.state.rawValue ?? "open"), "by": update.map { .string($0.by) } ?? .null,
            "mutedUntil": update?.mutedUntil.map { .number(Double($0)) } ?? .null,
            "buttons": .array(buttons),
        ]
    }
}

/// A request field of the wrong type or name: the change is abandoned, nothing stored.
struct WebInputError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
