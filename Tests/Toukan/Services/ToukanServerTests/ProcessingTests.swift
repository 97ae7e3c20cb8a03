import Foundation
import HTTPTypes
import HummingbirdTesting
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport

/// The worker: duration, loudness and a PocketSphinx transcript, written on the memory.
@Suite("processing", .serialized, .heavy(cores: 1, "GStreamer decoding and PocketSphinx"))
struct ProcessingTests {
    /// Uploads `file` and waits until its memory leaves `processing`.
    static func process(_ file: URL, transcribe: Bool = true) async throws -> [String: Any] {
        let bytes = [UInt8](try Data(contentsOf: file))
        let box = ResultBox()
        try await InProcessServer.run(workers: 1, transcribe: transcribe) { client, _ in
            let response = try await InProcessServer.upload(client, body: Multipart.body(bytes))
            try #require(response.status == .created)
            let id = InProcessServer.json(response)["memory_id"] as? String
            try await eventually("the memory to be processed", timeout: .seconds(180)) {
                let memory = try await InProcessServer.memories(client).first { $0["memory_id"] as? String == id }
                guard let memory, memory["status"] as? String != "processing" else { return false }
                box.set(memory)
                return true
            }
        }
        return box.value
    }

    @Test func aToneHasItsDurationAndLoudnessAndNoWords() async throws {
        // 0.5 linear = −6.02 dBFS: a 997 Hz sine reads −3.01 − 6.02 = −9.03 LUFS.
        let memory = try await Self.process(try await AudioFixtures.tone(seconds: 3, volume: 0.5, name: "tone-3s"))
        #expect(memory["status"] as? String == "ready", "\(memory)")
        let duration = try #require(memory["duration"] as? Double)
        #expect(abs(duration - 3.0) < 0.2, "\(duration)")
        let loudness = try #require(memory["loudness"] as? Double)
        #expect(abs(loudness - -9.03) < 0.5, "\(loudness)")
        let transcript = memory["transcript"] as? String ?? ""
        #expect(transcript.split(separator: " ").count <= 2, "a tone is no speech: \(transcript)")
    }

    @Test func speechIsTranscribed() async throws {
        let speech = try await AudioFixtures.speech(AudioFixtures.sentences[0], name: "speech-0")
        let memory = try await Self.process(speech.m4a)
        #expect(memory["status"] as? String == "ready", "\(memory)")
        let duration = try #require(memory["duration"] as? Double)
        #expect(abs(duration - speech.duration) < 0.2, "\(duration) vs \(speech.duration)")
        let loudness = try #require(memory["loudness"] as? Double)
        #expect(loudness > -40 && loudness < -5, "\(loudness)")
        let transcript = try #require(memory["transcript"] as? String)
        // PocketSphinx on espeak-ng is poor (docs/toukan.md: word error rate); "tomorrow" was recognised in every run.
        #expect(transcript.split(separator: " ").count >= 3, "\(transcript)")
        #expect(transcript.contains("tomorrow"), "\(transcript)")
    }

    @Test func undecodableAudioFailsWithAReason() async throws {
        // An ftyp box that passes the sniffer, then nothing decodable.
        var bytes: [UInt8] = [0, 0, 0, 0x18] + Array("ftypM4A ".utf8) + [0, 0, 0, 0] + Array("M4A mp42".utf8)
        bytes += [UInt8](repeating: 0x55, count: 5_000)
        let url = AudioFixtures.directory.appendingPathComponent("broken.m4a")
        try Data(bytes).write(to: url)
        let memory = try await Self.process(url, transcribe: false)
        #expect(memory["status"] as? String == "failed", "\(memory)")
        #expect((memory["error"] as? String)?.isEmpty == false)
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String: Any] = [:]

    func set(_ value: [String: Any]) {
        lock.lock()
        stored = value
        lock.unlock()
    }

    var value: [String: Any] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
