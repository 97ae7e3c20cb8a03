import CribCallListener
import CribCallProtocol
import Foundation
import Logging
import Testing

@testable import ArgusCribCall

/// What a CribCall listener hears, in the hub's words: the event types of the mobile API, observational
/// descriptions, and pictures only where they show what happened.
@Suite("CribCall monitors' news as the hub tells it")
struct NurseryNewsTests {
    let logger = Logger(label: "test")

    func news(_ event: ListenerEvent) -> NurseryMonitors.News? {
        NurseryMonitors.news(event, logger: logger)
    }

    @Test("a noise event is a 'noise' event with its level and time; replayed, it is not live")
    func noise() {
        let noise = NoiseEvent(monitorId: "m1", timestamp: 1_700_000_000_500, peakLevel: 82, seq: 3, eventId: "e3")
        let at = Date(timeIntervalSince1970: 1_700_000_000.5)
        #expect(
            news(.noise(monitorId: "m1", monitorName: "Nursery", event: noise))
                == .event(
                    monitorId: "m1", at: at, description: "Noise detected (level 82 of 100)",
                    smartDetectionType: "noise", confidence: nil, picture: nil, live: true))
        var replayed = noise
        replayed.replayed = true
        guard
            case .event(_, _, _, _, _, _, let live)? = news(.noise(monitorId: "m1", monitorName: "N", event: replayed))
        else {
            Issue.record("a replayed noise event is an event")
            return
        }
        #expect(!live)
    }

    @Test("safety alerts: the API's type (crying is 'cry'), CribAlert's calm words, confidence, the evidence picture")
    func safetyAlerts() throws {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0x01, 0xFF, 0xD9]
        let alert = SafetyAlert(
            seq: 4, alertId: "a4", kind: .faceCovered, detectedAt: 1_700_000_000_000, confidence: 0.8,
            detector: "face-haar", evidence: try SafetyEvidence(width: 320, height: 240, jpeg: jpeg))
        #expect(
            news(.safetyAlert(monitorId: "m1", monitorName: "Nursery", alert: alert))
                == .event(
                    monitorId: "m1", at: Date(timeIntervalSince1970: 1_700_000_000),
                    description: "Baby's face may be covered", smartDetectionType: "face_covered", confidence: 0.8,
                    picture: .init(jpeg: jpeg, width: 320), live: true))
        let kinds: [(SafetyAlertKind, String)] = [
            (.crying, "cry"), (.onStomach, "on_stomach"), (.stillness, "stillness"),
        ]
        for (kind, type) in kinds {
            let plain = SafetyAlert(
                seq: 5, alertId: "a5", kind: kind, detectedAt: 0, confidence: 0.5, detector: "trigger")
            guard
                case .event(_, _, let words, let seen, _, let picture, _)? =
                    news(.safetyAlert(monitorId: "m1", monitorName: "N", alert: plain))
            else {
                Issue.record("\(kind) is an event")
                continue
            }
            #expect(seen == type && picture == nil)
            for word in ["breathing", "SIDS", "suffocation", "emergency"] { #expect(!words.contains(word)) }
        }
    }

    @Test("online while connected; lost, unauthorized or unreachable is offline; streams are not news")
    func links() {
        #expect(
            news(.connected(monitorId: "m1", monitorName: "N", address: "127.0.0.1:1"))
                == .online(monitorId: "m1", true, reason: nil))
        #expect(news(.linkRestored(monitorId: "m1", monitorName: "N")) == .online(monitorId: "m1", true, reason: nil))
        #expect(
            news(.linkLost(monitorId: "m1", monitorName: "N", reason: "no answer"))
                == .online(monitorId: "m1", false, reason: "no answer"))
        #expect(
            news(.unauthorized(monitorId: "m1", monitorName: "N", message: "revoked"))
                == .online(monitorId: "m1", false, reason: "revoked"))
        #expect(news(.streamStarted(monitorId: "m1", sessionId: "s", mediaType: .audioVideo)) == nil)
    }
}
