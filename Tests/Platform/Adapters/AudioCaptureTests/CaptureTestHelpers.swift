import Foundation
import TestSupport
import Testing

@testable import AudioCapture

/// Reads chunks until at least `count` samples arrived, then ends the iteration (which stops the capture).
func collect(
    _ capture: GStreamerAudioCapture,
    samples count: Int,
    timeout: Duration = .seconds(30)
) async throws -> [Float] {
    let stream = capture.chunks()
    return try await withTimeout(timeout, "capturing \(count) samples from \(capture.source)") {
        var samples: [Float] = []
        for try await chunk in stream {
            #expect(chunk.count == capture.configuration.chunkSize)
            samples += chunk
            if samples.count >= count { break }
        }
        return samples
    }
}

/// How a capture that is expected to fail ended.
enum CaptureOutcome: Sendable {
    case failed(AudioCaptureError)
    case failedWithOtherError(String)
    case deliveredAudio
    case finished
}

/// Starts the capture and reports whether it failed, delivered audio, or finished.
func firstOutcome(of capture: GStreamerAudioCapture, timeout: Duration = .seconds(10)) async throws -> CaptureOutcome {
    let stream = capture.chunks()
    return try await withTimeout(timeout, "the outcome of capturing \(capture.source)") {
        do {
            for try await _ in stream { return .deliveredAudio }
            return .finished
        } catch let error as AudioCaptureError {
            return .failed(error)
        } catch {
            return .failedWithOtherError("\(error)")
        }
    }
}

/// Waits until the capture has released its pipeline (everything finalised, every retain balanced).
func waitUntilReleased(_ capture: GStreamerAudioCapture, timeout: Duration = .seconds(10)) async throws {
    try await withTimeout(timeout, "releasing the pipeline of \(capture.source)") {
        while !(capture.state == .stopped && capture.isFullyReleased) {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// RMS of a slice.
func rms(_ samples: ArraySlice<Float>) -> Float {
    guard !samples.isEmpty else { return 0 }
    return (samples.reduce(Float(0)) { $0 + $1 * $1 } / Float(samples.count)).squareRoot()
}

/// Sign changes in a slice (≈ 2 × frequency × duration for a tone).
func zeroCrossings(_ samples: ArraySlice<Float>) -> Int {
    zip(samples, samples.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
}
