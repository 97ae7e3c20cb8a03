import CribCallStore
import Foundation
import SoundDetection
import Testing

@Suite("Monitor settings and the PIN-failure counter")
struct MonitorSettingsTests {
    @Test("unset settings read as the protocol defaults")
    func defaults() throws {
        let settings = try CribCallDatabase.inMemory().monitorSettings()
        #expect(settings.monitorName == "CribCall monitor")
        #expect(settings.threshold == 60)
        #expect(settings.minDurationMs == 600)
        #expect(settings.cooldownSec == 10)
        #expect(settings.autoStream == .none)
        #expect(settings.autoStreamSec == 30)
        #expect(settings.detectorConfiguration == SoundDetectorConfiguration.default)
    }

    @Test("updates are stored and map onto the detector configuration")
    func update() throws {
        let database = try CribCallDatabase.inMemory()
        let returned = try database.updateMonitorSettings { settings in
            settings.monitorName = "Nursery"
            settings.threshold = 45
            settings.minDurationMs = 1200
            settings.cooldownSec = 30
            settings.autoStream = .audioVideo
            settings.autoStreamSec = 120
        }
        let stored = try database.monitorSettings()
        #expect(stored == returned)
        #expect(stored.monitorName == "Nursery")
        #expect(stored.autoStream == .audioVideo)
        #expect(stored.autoStreamSec == 120)
        #expect(
            stored.detectorConfiguration
                == (try SoundDetectorConfiguration(
                    threshold: 45, minDurationMs: 1200, cooldownSeconds: 30
                )))
    }

    @Test(
        "out-of-range values are refused with a message naming the allowed range, and nothing is stored",
        arguments: [
            ("threshold", "threshold must be in 0...100 (got 101)"),
            ("minDurationMs", "minDurationMs must be in 20...60000 ms (got 19)"),
            ("cooldownSec", "cooldownSec must be in 0...3600 s (got 3601)"),
            ("autoStreamSec", "autoStreamSec must be in 5...600 s (got 4)"),
            ("monitorName", "monitorName must be 1...64 characters (got 0)"),
        ]
    )
    func validation(field: String, message: String) throws {
        let database = try CribCallDatabase.inMemory()
        #expect(throws: CribCallStoreError.invalidSetting(field: field, message: message)) {
            try database.updateMonitorSettings { settings in
                settings.threshold = 10  // a valid change in the same call must not be stored either
                switch field {
                case "threshold": settings.threshold = 101
                case "minDurationMs": settings.minDurationMs = 19
                case "cooldownSec": settings.cooldownSec = 3601
                case "autoStreamSec": settings.autoStreamSec = 4
                default: settings.monitorName = "   "
                }
            }
        }
        #expect(try database.monitorSettings() == MonitorSettings.defaults)
    }

    @Test("the range bounds themselves are accepted")
    func boundsAccepted() throws {
        let database = try CribCallDatabase.inMemory()
        try database.updateMonitorSettings { settings in
            settings.threshold = 0
            settings.minDurationMs = 60_000
            settings.cooldownSec = 3600
            settings.autoStreamSec = 5
        }
        try database.updateMonitorSettings { settings in
            settings.threshold = 100
            settings.minDurationMs = 20
            settings.cooldownSec = 0
            settings.autoStreamSec = 600
        }
        #expect(try database.monitorSettings().autoStreamSec == 600)
    }

    @Test("settings and the PIN-failure counter survive closing and reopening the file")
    func persistedAcrossReopen() throws {
        try StoreFixtures.withDirectory { directory in
            do {
                let database = try CribCallDatabase(directory: directory)
                try database.updateMonitorSettings { settings in
                    settings.threshold = 72
                    settings.autoStream = .audio
                }
                #expect(try database.pinPairingFailures() == 0)
                try database.setPinPairingFailures(8)
                #expect(try database.recordPinPairingFailure() == 9)
            }
            let reopened = try CribCallDatabase(directory: directory)
            let settings = try reopened.monitorSettings()
            #expect(settings.threshold == 72)
            #expect(settings.autoStream == .audio)
            #expect(settings.cooldownSec == 10)
            #expect(try reopened.pinPairingFailures() == 9)
            try reopened.setPinPairingFailures(0)
            #expect(try CribCallDatabase(directory: directory).pinPairingFailures() == 0)
        }
    }

    @Test("a negative PIN-failure count is refused")
    func negativePinFailures() throws {
        let database = try CribCallDatabase.inMemory()
        #expect(throws: CribCallStoreError.self) { try database.setPinPairingFailures(-1) }
        #expect(try database.pinPairingFailures() == 0)
    }

    @Test("the safety settings: defaults, stored, and refused with what is allowed")
    func safetySettings() throws {
        let database = try CribCallDatabase.inMemory()
        let defaults = try database.monitorSettings()
        #expect(defaults.safetyAlerts && defaults.sleepArea == "0,0,1,1")
        #expect(defaults.stillnessMinutes == 20 && defaults.crySensitivity == "medium")
        try database.updateMonitorSettings {
            $0.safetyAlerts = false
            $0.sleepArea = "0.2,0.1,0.6,0.8"
            $0.stillnessMinutes = 45
            $0.crySensitivity = "high"
        }
        let stored = try database.monitorSettings()
        #expect(!stored.safetyAlerts && stored.sleepArea == "0.2,0.1,0.6,0.8")
        #expect(stored.stillnessMinutes == 45 && stored.crySensitivity == "high")
        let refusals: [(String, (inout MonitorSettings) -> Void)] = [
            ("sleepArea: the sleep area must lie inside the frame", { $0.sleepArea = "0.5,0.5,0.9,0.2" }),
            ("stillnessMinutes must be in 1...240 min (got 0)", { $0.stillnessMinutes = 0 }),
            ("crySensitivity must be low, medium or high (got loud)", { $0.crySensitivity = "loud" }),
        ]
        for (message, change) in refusals {
            #expect {
                try database.updateMonitorSettings(change)
            } throws: { error in
                guard case .invalidSetting(_, let text) = error as? CribCallStoreError else { return false }
                return text.hasPrefix(message)
            }
        }
        #expect(try database.monitorSettings() == stored, "nothing stored by a refused change")
    }
}
