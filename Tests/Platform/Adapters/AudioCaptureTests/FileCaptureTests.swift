import Foundation
import SoundDetection
import TestSupport
import Testing

@testable import AudioCapture

/// A file source through the real GStreamer pipeline: decoding, downmix, resampling to 16 kHz, gapless looping,
/// real-time pacing, bounded buffering and teardown.
@Suite("Capturing from a file")
struct FileCaptureTests {
    /// A 1 kHz tone at peak 0.5 (RMS 0.354, level 90), 48 kHz stereo 16-bit, 0.5 s = 500 whole cycles, so a
    /// gapless loop is seamless.
    static let toneRMS = Float(0.5 / 2.0.squareRoot())

    /// A temporary directory whose name has a space, quotes and pipeline syntax, removed after the test.
    struct Files: ~Copyable {
        let directory: URL

        init() throws {
            directory = try Subprocess.temporaryDirectory("audio capture 'quoted' \"dir\" ! fakesrc")
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func tone() throws -> String {
            let url = directory.appendingPathComponent("tone 1 kHz 'loud' ! queue.wav")
            let samples = WAVFile.tone(frequency: 1_000, amplitude: 0.5, seconds: 0.5, sampleRate: 48_000, channels: 2)
            try WAVFile.write(samples, channels: 2, sampleRate: 48_000, to: url)
            return url.path
        }

        func silence() throws -> String {
            let url = directory.appendingPathComponent("silence \"quiet\".wav")
            var source = TestAudioSource(.silence)
            try WAVFile.write(source.next(8_000), channels: 1, sampleRate: 16_000, to: url)
            return url.path
        }
    }

    @Test("a 48 kHz stereo WAV arrives as 16 kHz mono at the file's level, looped without gaps, in real time")
    func toneFile() async throws {
        let files = try Files()
        let capture = try GStreamerAudioCapture(source: .file(path: try files.tone()))
        let start = ContinuousClock.now
        let samples = try await collect(capture, samples: 24_000)  // 1.5 s: three times the file's 8000 samples
        let elapsed = ContinuousClock.now - start

        #expect(samples.count >= 24_000)
        #expect(samples.allSatisfy { $0 >= -1 && $0 <= 1 })
        // 1 kHz at 16 kHz: 200 sign changes per 1600 samples (it would be ~67 if the rate were still 48 kHz).
        let crossings = zeroCrossings(samples[1_600..<3_200])
        #expect((190...210).contains(crossings), "zero crossings per 100 ms: \(crossings)")
        // Every 20 ms frame after the resampler's start-up has the tone's RMS: no gap or glitch at the loop points.
        let frames = stride(from: 1_600, to: 24_000, by: 320).map { rms(samples[$0..<($0 + 320)]) }
        let worst = frames.map { abs($0 - Self.toneRMS) / Self.toneRMS }.max() ?? 1
        #expect(worst < 0.05, "a 20 ms frame deviates \(worst * 100) % from the tone's RMS")
        // Paced by the clock: 1.5 s of audio cannot arrive in much less than 1.5 s (only a lower bound is checked).
        #expect(elapsed > .seconds(1), "1.5 s of audio arrived after \(elapsed)")

        try await waitUntilReleased(capture)
    }

    @Test(
        "compressed files are decoded and looped too",
        arguments: [("flac", ["flacenc"]), ("ogg", ["vorbisenc", "oggmux"]), ("opus", ["opusenc", "oggmux"])]
    )
    func compressedFile(suffix: String, encoder: [String]) async throws {
        let files = try Files()
        let plain = try Subprocess.temporaryDirectory("audio-capture-encode")
        defer { try? FileManager.default.removeItem(at: plain) }
        let wav = plain.appendingPathComponent("tone.wav").path
        try FileManager.default.copyItem(atPath: try files.tone(), toPath: wav)
        let output = plain.appendingPathComponent("tone.\(suffix)").path
        try EncodedFile.encode(wav: wav, to: output, with: encoder)
        let encoded = files.directory.appendingPathComponent("tone 'encoded'.\(suffix)").path
        try FileManager.default.moveItem(atPath: output, toPath: encoded)

        let capture = try GStreamerAudioCapture(source: .file(path: encoded))
        let samples = try await collect(capture, samples: 16_000)  // 1 s: twice the file
        let level = rms(samples[1_600...])
        // Lossy codecs pad and prime: the loop point may hold a few ms of transition (Opus measured 12 % off):
        // 25 % still tells the tone from silence or a doubled signal.
        #expect(abs(level - Self.toneRMS) / Self.toneRMS < 0.25, "RMS \(level)")
        #expect((190...210).contains(zeroCrossings(samples[1_600..<3_200])))
        try await waitUntilReleased(capture)
    }

    @Test("the captured tone triggers the sound detector; a quiet file does not")
    func detection() async throws {
        let files = try Files()
        for (path, loud) in [(try files.tone(), true), (try files.silence(), false)] {
            let capture = try GStreamerAudioCapture(source: .file(path: path))
            var detector = try SoundDetector(inputSampleRate: GStreamerAudioCapture.sampleRate)
            let samples = try await collect(capture, samples: 16_000)  // 1 s > the default 600 ms minimum
            let events = detector.process(samples)
            if loud {
                #expect(events.count == 1)
                #expect(events.first?.peakLevel == 90)
                #expect(events.first?.offsetMs == 600)
            } else {
                #expect(events.isEmpty)
                #expect(detector.currentLevel < 40, "quiet file level \(detector.currentLevel)")
            }
            try await waitUntilReleased(capture)
        }
    }

    @Test("cancelling the consuming task sets the pipeline to NULL and releases everything")
    func cancellation() async throws {
        let files = try Files()
        let capture = try GStreamerAudioCapture(source: .file(path: try files.tone()))
        #expect(capture.state == .idle)
        let stream = capture.chunks()
        #expect(capture.state == .running)
        let consumer = Task {
            var chunks = 0
            for try await _ in stream { chunks += 1 }
            return chunks
        }
        try await Task.sleep(for: .milliseconds(400))
        #expect(capture.state == .running)
        consumer.cancel()
        let chunks = try await consumer.value
        #expect(chunks >= 1)
        try await waitUntilReleased(capture)
        #expect(capture.state == .stopped)
    }

    @Test("stop() finishes the stream normally and returns after the pipeline is released")
    func stop() async throws {
        let files = try Files()
        let capture = try GStreamerAudioCapture(source: .file(path: try files.tone()))
        let stream = capture.chunks()
        let consumer = Task {
            var chunks = 0
            for try await _ in stream { chunks += 1 }
            return chunks  // reached only if the stream finishes without an error
        }
        try await Task.sleep(for: .milliseconds(300))
        await capture.stop()
        #expect(capture.state == .stopped)
        _ = try await withTimeout(.seconds(5), "the stream's end after stop()") { try await consumer.value }
        try await waitUntilReleased(capture)
        await capture.stop()  // idempotent
    }

    @Test("a capture starts once")
    func startsOnce() async throws {
        let files = try Files()
        let capture = try GStreamerAudioCapture(source: .file(path: try files.tone()))
        let first = capture.chunks()
        guard case .failed(let error) = try await firstOutcome(of: capture) else {
            Issue.record("a second chunks() call did not fail")
            return
        }
        #expect(error.code == .alreadyStarted)
        var iterator = first.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 1_600)
        await capture.stop()

        let neverStarted = try GStreamerAudioCapture(source: .file(path: try files.tone()))
        await neverStarted.stop()
        #expect(neverStarted.state == .stopped)
        guard case .failed(let late) = try await firstOutcome(of: neverStarted) else {
            Issue.record("chunks() after stop() did not fail")
            return
        }
        #expect(late.code == .alreadyStarted)
    }

    @Test("a slow consumer loses the oldest chunks, counted, instead of buffering without bound")
    func boundedBuffering() async throws {
        let files = try Files()
        let capture = try GStreamerAudioCapture(
            source: .file(path: try files.tone()),
            configuration: AudioCaptureConfiguration(chunkSize: 1_600, maxBufferedChunks: 2)
        )
        let stream = capture.chunks()
        try await Task.sleep(for: .milliseconds(1_200))  // ~11 chunks produced, only 2 kept
        #expect(capture.droppedChunkCount >= 3)
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 1_600)
        await capture.stop()
        try await waitUntilReleased(capture)
    }

    @Test("chunk size is configurable")
    func chunkSize() async throws {
        let files = try Files()
        let capture = try GStreamerAudioCapture(
            source: .file(path: try files.tone()),
            configuration: AudioCaptureConfiguration(chunkSize: 320)
        )
        let samples = try await collect(capture, samples: 3_200)
        #expect(samples.count == 3_200)
        try await waitUntilReleased(capture)
    }
}
