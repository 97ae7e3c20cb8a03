import AudioCapture
import CribCallMonitor
import CribCallProtocol
import Foundation
import Synchronization
import Testing

/// What `cribcall monitor` prints, and what stops it, without a process.
@Suite("Monitor output and detection failures")
struct MonitorPresentationTests {
    @Test("events read as sentences; keys are mentioned only on an interactive terminal")
    func text() throws {
        let ready = MonitorEvent.ready(monitorId: "m", monitorName: "Nursery", certFingerprint: "ab12", port: 48080)
        let plain = try #require(ready.text(interactive: false))
        #expect(plain.hasPrefix("Monitor \"Nursery\" is listening on UDP port 48080."))
        #expect(plain.contains("cribcall pair --pin --address HOST:48080 --fingerprint ab12"))
        #expect(!plain.contains("Press q"))
        #expect(
            try #require(ready.text(interactive: true)).hasSuffix(
                "Press q to show a pairing QR code; Ctrl-C stops the monitor."))
        #expect(
            MonitorEvent.noise(seq: 3, eventId: "e3", peakLevel: 77, timestamp: 0).text(interactive: false)
                == "Noise #3: peak level 77 — alert sent to connected listeners.")
        #expect(
            MonitorEvent.streamEnded(sessionId: "0123456789", reason: "listener left").text(interactive: false)
                == "Stream 01234567 ended (listener left).")
    }

    @Test("an input that fails stops detection with a reason; cancellation is not a failure")
    func detectionFailure() async throws {
        let harness = try MonitorHarness()
        let failing = FailingInput(AudioCaptureError(code: .inputEnded, message: "the microphone went away"))
        #expect(await harness.service.detectSound(from: failing) == "audio stopped: the microphone went away")
        let endless = FailingInput(nil)
        let detection = Task { await harness.service.detectSound(from: endless) }
        try await Task.sleep(for: .milliseconds(50))
        detection.cancel()
        #expect(await detection.value == nil)
    }
}

/// An input that fails at once with `error`, or (nil) yields silence until cancelled.
final class FailingInput: AudioInput {
    let error: AudioCaptureError?

    init(_ error: AudioCaptureError?) {
        self.error = error
    }

    func chunks() -> AsyncThrowingStream<[Float], any Error> {
        let error = error
        return AsyncThrowingStream { continuation in
            if let error {
                continuation.finish(throwing: error)
                return
            }
            let task = Task {
                while !Task.isCancelled {
                    continuation.yield([Float](repeating: 0, count: 1600))
                    try? await Task.sleep(for: .milliseconds(10))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func stop() async {}
}
