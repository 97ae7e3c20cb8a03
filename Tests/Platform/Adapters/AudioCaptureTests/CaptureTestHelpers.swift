import Foundation
import TestSupport
import Testing

@testable import AudioCapture

/// 16-bit PCM WAV files written by the tests.
enum WAVFile {
    /// Writes interleaved samples in −1...1 as a 16-bit PCM WAV file.
    static func write(_ samples: [Float], channels: Int, sampleRate: Int, to url: URL) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        let dataSize = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + dataSize))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))  // PCM
        append(UInt16(channels))
        append(UInt32(sampleRate))
        append(UInt32(sampleRate * channels * 2))
        append(UInt16(channels * 2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(dataSize))
        for sample in samples {
            append(Int16((max(-1, min(1, sample)) * 32_767).rounded()))
        }
        try data.write(to: url)
    }

    /// A sine tone, the same on every channel.
    static func tone(
        frequency: Double,
        amplitude: Double,
        seconds: Double,
        sampleRate: Int,
        channels: Int
    ) -> [Float] {
        let frames = Int(seconds * Double(sampleRate))
        var samples: [Float] = []
        samples.reserveCapacity(frames * channels)
        for frame in 0..<frames {
            let value = Float(amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate)))
            for _ in 0..<channels { samples.append(value) }
        }
        return samples
    }
}

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
