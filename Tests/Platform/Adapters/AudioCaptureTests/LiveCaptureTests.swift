import Testing

@testable import AudioCapture

/// The live-source path (no file pacing, no looping) through a real ALSA PCM: alsa-lib's `null` device, which
/// exists without sound hardware and records digital silence.
@Suite("Capturing from a live ALSA device")
struct LiveCaptureTests {
    @Test("alsa:null delivers 16 kHz mono chunks of silence until stopped")
    func alsaNull() async throws {
        let capture = try GStreamerAudioCapture(source: AudioSourceSpec(parsing: "alsa:null"))
        let samples = try await collect(capture, samples: 4_800)
        #expect(samples.count == 4_800)
        #expect(samples.allSatisfy { $0 == 0 })
        try await waitUntilReleased(capture)
    }
}
