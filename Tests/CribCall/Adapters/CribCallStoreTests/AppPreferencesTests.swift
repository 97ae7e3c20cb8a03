import CribCallStore
import Foundation
import Testing

@Suite("The app's preferences and history in the monitor's database")
struct AppPreferencesTests {
    @Test("defaults, atomic validated changes, kept across reopening")
    func preferences() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try CribCallDatabase(directory: directory)
        #expect(try database.appPreferences() == AppPreferences())
        try database.updateAppPreferences {
            $0.disclaimerAccepted = true
            $0.babyName = "Liam"
            $0.volume = 40
        }
        #expect(throws: CribCallStoreError.self) { try database.updateAppPreferences { $0.volume = 101 } }
        #expect(throws: CribCallStoreError.self) { try database.updateAppPreferences { $0.alertSound = "siren" } }
        #expect(throws: CribCallStoreError.self) { try database.updateAppPreferences { $0.babyName = "a\u{202E}b" } }
        #expect(throws: CribCallStoreError.self) {
            try database.updateAppPreferences {
                $0.setupComplete = true
                $0.babyName = ""
            }
        }
        let reopened = try CribCallDatabase(directory: directory)
        let stored = try reopened.appPreferences()
        #expect(stored.disclaimerAccepted && stored.babyName == "Liam" && stored.volume == 40)
        #expect(!stored.setupComplete && stored.alertSound == "calm-chime")
    }

    @Test("monitoring runs: started, seen, ended; a run cut short ends where it was last seen")
    func sessions() throws {
        let database = try CribCallDatabase.inMemory()
        let first = try database.beginMonitoringSession(at: 1_000)
        try database.touchMonitoringSession(id: first, at: 61_000)
        // Cut (no end), then a new run begins.
        let second = try database.beginMonitoringSession(at: 100_000)
        try database.endMonitoringSession(id: second, at: 160_000)
        let runs = try database.monitoringSessions(from: 0, to: 1_000_000)
        #expect(runs.map(\.startedAt) == [1_000, 100_000])
        #expect(runs.map(\.endedAt) == [61_000, 160_000])
        #expect(try database.monitoringSessions(from: 70_000, to: 90_000).isEmpty)
        #expect(try database.monitoringSessions(from: 150_000, to: 200_000).map(\.id) == [second])
        #expect(try database.monitoringSessionStarts(before: 1_000_000, limit: 10) == [100_000, 1_000])
    }

    @Test("the latest action on each alert is kept; events of a stretch of time, newest first")
    func alertUpdatesAndEvents() throws {
        let database = try CribCallDatabase.inMemory()
        try database.appendSafetyAlert(
            alertId: "a1", kind: "crying", severity: "medium", timestamp: 5_000, confidence: 0.8, detector: "d")
        try database.appendNoiseEvent(
            eventId: "n1", kind: "noise", timestamp: 6_000, peakLevel: 70, autoStreamSessionId: nil)
        try database.appendNoiseEvent(
            eventId: "n0", kind: "noise", timestamp: 1_000, peakLevel: 70, autoStreamSessionId: nil)
        try database.recordAlertUpdate(
            .init(alertId: "a1", state: "checking", byName: "Mum", at: 5_500, mutedUntil: nil))
        try database.recordAlertUpdate(.init(alertId: "a1", state: "okay", byName: "Dad", at: 5_600, mutedUntil: nil))
        let updates = try database.alertUpdates(for: ["a1", "zz"])
        #expect(updates.count == 1 && updates["a1"]?.state == "okay" && updates["a1"]?.byName == "Dad")
        #expect(try database.alertUpdates(for: []).isEmpty)
        #expect(try database.events(from: 2_000, to: 10_000, limit: 10).map(\.eventId) == ["n1", "a1"])
        #expect(try database.events(from: 0, to: 10_000, limit: 1).map(\.eventId) == ["n0"])
    }

    @Test("a listener keeps each event it heard once (replays included), newest first, for 60 days")
    func receivedEvents() throws {
        let database = try CribCallDatabase.inMemory()
        let day: Int64 = 24 * 3600 * 1000
        func event(_ id: String, at timestamp: Int64, severity: String? = nil) -> ReceivedEventRecord {
            ReceivedEventRecord(
                eventId: id, monitorId: "m1", seq: 1, kind: severity == nil ? "noise" : "crying", timestamp: timestamp,
                peakLevel: 70, severity: severity)
        }
        try database.recordReceivedEvent(event("old", at: 1_000))
        try database.recordReceivedEvent(event("a", at: 70 * day, severity: "medium"))
        try database.recordReceivedEvent(event("a", at: 70 * day, severity: "medium"))
        try database.recordReceivedEvent(event("b", at: 70 * day + 5))
        let kept = try database.receivedEvents(from: 0, to: .max, limit: 10)
        #expect(kept.map(\.eventId) == ["b", "a"], "the replay is not kept twice; 60-day-old events are gone")
        #expect(kept[1].asLogged.isSafetyAlert && !kept[0].asLogged.isSafetyAlert)
        #expect(try database.receivedEvents(from: 70 * day + 1, to: .max, limit: 10).map(\.eventId) == ["b"])
    }
}
