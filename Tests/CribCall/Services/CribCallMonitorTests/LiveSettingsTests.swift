import AudioCapture
import CribCallDiscovery
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import Foundation
import ServiceDiscovery
import SoundDetection
import Synchronization
import TestSupport
import Testing

/// Settings changed from another terminal (`cribcall settings set …`, same data directory) take effect in the
/// running monitor: detection follows them and a new name is announced on the LAN.
@Suite
struct LiveSettingsTests {
    @Test("a threshold set by another process is in force within a second; a rename is re-announced")
    func settingsFromAnotherProcess() async throws {
        let directory = try Subprocess.temporaryDirectory("monitor-settings")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try MonitorHarness(database: try CribCallDatabase(directory: directory))
        let discovery = InMemoryServiceDiscovery()
        _ = try await harness.service.advertise(using: discovery)
        #expect(await harness.service.detectorConfiguration.threshold == MonitorSettings.defaults.threshold)

        // Another process (sqlite3, writing what `cribcall settings set` writes in a second terminal).
        let file = directory.appendingPathComponent(CribCallDatabase.fileName).path
        let set = try await Subprocess.run(
            "sqlite3",
            [
                file,
                """
                INSERT OR REPLACE INTO setting (key, value)
                VALUES ('threshold', '75'), ('cooldownSec', '30'), ('monitorName', 'Nursery upstairs')
                """,
            ])
        #expect(set.status == 0, "\(set.stderrText)")
        let changed = await harness.event {
            if case .settingsChanged(let settings) = $0 { return settings.threshold == 75 }
            return false
        }
        #expect(changed != nil, "events: \(harness.events)")
        let configuration = await harness.service.detectorConfiguration
        #expect(configuration.threshold == 75)
        #expect(configuration.cooldownSeconds == 30)

        // The announcement carries the new name (browsers see it without the monitor restarting).
        let browsing = Task {
            var names: [String] = []
            for try await event in discovery.browseMonitors() {
                if case .found(let monitor) = event { names.append(monitor.monitorName) }
                if case .updated(let monitor) = event { names.append(monitor.monitorName) }
                if names.last == "Nursery upstairs" { break }
            }
            return names
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(10))
            browsing.cancel()
        }
        let names = try await browsing.value
        timer.cancel()
        #expect(names.last == "Nursery upstairs")
        await harness.stop()
    }

    @Test("the detection loop applies a new configuration from the next chunk on")
    func detectionLoopFollowsConfiguration() async throws {
        // A steady loud tone (level ≈ 84): with threshold 95 nothing is detected, with 60 it is.
        let input = ToneInput(chunks: 60)
        let threshold = Mutex(95)
        let detections = Mutex<[(detection: NoiseDetection, chunk: Int)]>([])
        let switchAfter = 20
        let seen = Mutex(0)
        try await DetectionLoop.run(
            input: input,
            configuration: {
                let count = seen.withLock { count in
                    count += 1
                    return count
                }
                if count == switchAfter { threshold.withLock { $0 = 60 } }
                return try! SoundDetectorConfiguration(
                    threshold: threshold.withLock { $0 }, minDurationMs: 300,
                    cooldownSeconds: 60)
            },
            report: { detection in
                detections.withLock { $0.append((detection, seen.withLock { $0 })) }
            }
        )
        let found = detections.withLock { $0 }
        // One detection, only once the threshold was lowered (the tone is loud from the first chunk on).
        #expect(found.count == 1, "\(found)")
        #expect((found.first?.chunk ?? 0) >= switchAfter)
        #expect(input.stopped.withLock { $0 })
    }
}

/// A finite input of 100 ms chunks of a loud 440 Hz tone, for driving the detection loop without a clock.
final class ToneInput: AudioInput {
    let count: Int
    let stopped = Mutex(false)

    init(chunks: Int) {
        count = chunks
    }

    func chunks() -> AsyncThrowingStream<[Float], any Error> {
        let count = count
        return AsyncThrowingStream { continuation in
            var phase = 0.0
            for _ in 0..<count {
                var chunk = [Float](repeating: 0, count: 1600)
                for index in chunk.indices {
                    chunk[index] = Float(0.5 * sin(phase))
                    phase += 2 * .pi * 440 / 16_000
                }
                continuation.yield(chunk)
            }
            continuation.finish()
        }
    }

    func stop() async {
        stopped.withLock { $0 = true }
    }
}
