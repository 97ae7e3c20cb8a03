import AudioCapture
import SoundDetection
import Testing

/// `test:cry` / `test:silence` as live inputs: the same samples as ``TestAudioSource``, in 100 ms chunks.
@Suite("Test signal input")
struct TestSignalInputTests {
    @Test(
        "delivers TestAudioSource's samples in 100 ms chunks, in order, and stops when asked",
        .timeLimit(.minutes(1))
    )
    func samplesAndStop() async throws {
        let input = TestSignalInput(.cry)
        var reference = TestAudioSource(.cry)
        let expected = (0..<300).map { _ in reference.next(1_600) }  // the first 30 s
        var received = 0
        var next = 0
        for try await chunk in input.chunks() {
            #expect(chunk.count == 1_600)
            // Exactly the reference's samples, in order. A consumer starved for seconds (a loaded CI machine) may
            // lose the oldest chunks, as from a microphone, so a later chunk is accepted; an altered one is not.
            let index = expected[next...].firstIndex(of: chunk)
            #expect(index != nil, "chunk \(received) is not one of the reference's chunks from \(next) on")
            next = (index ?? next) + 1
            received += 1
            if received == 5 { await input.stop() }
        }
        // The loop ending at all is the check that stop() ends the stream (a producer that kept going would make
        // 300 chunks in 30 s and never finish). Chunks made before stop() and still buffered for a starved
        // consumer are delivered first: at most the input's buffer of 50.
        #expect(received >= 5 && received <= 5 + 50, "the stream kept going after stop(): \(received) chunks")
    }

    @Test("the spec opens the matching input: test signals in-process, the rest through GStreamer")
    func opening() throws {
        #expect(try AudioInputs.open(try AudioSourceSpec(parsing: "test:silence")) is TestSignalInput)
        #expect(try AudioInputs.open(try AudioSourceSpec(parsing: "file:/nonexistent.wav")) is GStreamerAudioCapture)
    }
}
