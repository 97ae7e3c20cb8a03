import AudioCapture
import CribCallProtocol
import DeviceIdentity
import Foundation
import SoundDetection
import StreamMedia
import TestSupport
import Testing

@testable import Media

/// Real webrtcbin pipelines on 127.0.0.1, one at a time (each costs a core while negotiating).
@Suite(.serialized, .heavy("webrtcbin pipelines in real time, aiortc"))
struct LiveStreamTests {
    // MARK: - aiortc

    @Test("a sender streams Opus that aiortc (an independent WebRTC stack) negotiates and decodes for 2 s")
    func aiortcDecodesTheSendersOpus() async throws {
        let certificate = try MediaTestSupport.certificate()
        let engine = try GStreamerMediaEngine(
            configuration: .init(dtlsCertificate: certificate, audioSource: .test(.cry), iceAddresses: ["127.0.0.1"])
        )
        guard
            let run = try await AiortcPeer.answer(
                engine, sessionId: "interop-aiortc", mediaType: .audio,
                arguments: ["--seconds", "2.5", "--timeout", "25"], timeout: .seconds(30)
            )
        else { return }
        let result_ = run.result
        let offer = run.offer

        // The offer: Opus first (and only), pt 111, FEC declared, the certificate's real fingerprint.
        let audioSection = try #require(offer.components(separatedBy: "m=audio ").dropFirst().first)
        #expect(audioSection.hasPrefix("9 UDP/TLS/RTP/SAVPF 111"), "Opus (111) must be the first payload type")
        #expect(offer.contains("a=rtpmap:111 OPUS/48000/2"))
        let fmtp = try #require(result_["offer_fmtp"] as? [String]).joined(separator: "\n")
        #expect(fmtp.contains("useinbandfec=1"), "offer fmtp: \(fmtp)")
        #expect(SessionDescriptionText.fingerprints(in: offer) == [certificate.sdpFingerprint])
        #expect(offer.contains("a=sendonly"))
        // aiortc's answer negotiated Opus.
        let answerRtpmap = try #require(result_["answer_rtpmap"] as? [String])
        #expect(answerRtpmap.contains { $0.lowercased().contains("opus/48000") }, "answer: \(answerRtpmap)")
        // Trickled candidates: host UDP on 127.0.0.1 with mid and m-line index, then the end marker, last.
        let candidates = run.events.compactMap(\.localCandidate)
        let real = candidates.filter { !$0.candidate.isEmpty }
        #expect(!real.isEmpty)
        #expect(real.allSatisfy { $0.candidate.hasPrefix("candidate:") && $0.candidate.contains(" 127.0.0.1 ") })
        #expect(real.allSatisfy { $0.candidate.contains(" UDP ") || $0.candidate.contains(" udp ") })
        #expect(
            candidates.allSatisfy { $0.sdpMid == "audio0" || $0.sdpMid == "0" }
                || candidates.allSatisfy { $0.sdpMid != nil })
        #expect(candidates.allSatisfy { $0.sdpMLineIndex == 0 })
        #expect(candidates.last?.candidate == "", "the end-of-candidates marker must come after every candidate")
        // aiortc decoded at least 2 s of audio.
        #expect(result_["error"] == nil, "aiortc: \(result_["error"] ?? "")\n\(run.log)")
        let seconds = result_["seconds"] as? Double ?? 0
        let samples = result_["samples"] as? Int ?? 0
        #expect(seconds >= 2.0, "decoded for \(seconds) s")
        #expect(samples >= 2 * 48_000, "decoded \(samples) samples")
        #expect(result_["sample_rates"] as? [Int] == [48_000])
        #expect(run.flowingAfter != nil, "the sender never reported .flowing")
        // Stopped by the test (AiortcPeer checked that it ended and released every GStreamer object).
        #expect(run.events.last?.endReason == "stopped")
        let firstFrame = result_["first_frame_ms"] ?? "?"
        print(
            "aiortc interop: flowing after \(run.flowingAfter.map { "\($0)" } ?? "-"), first frame at aiortc \(firstFrame) ms"
        )
    }

    // MARK: - Swift ↔ Swift

    @Test("a receiver answers our sender's offer and records ≥ 2 s of the 440 Hz tone to WAV")
    func receiverRecordsTheSendersTone() async throws {
        let directory = try Subprocess.temporaryDirectory("media-receiver")
        defer { try? FileManager.default.removeItem(at: directory) }
        let monitor = try MediaTestSupport.senderEngine()
        let listener = try MediaTestSupport.receiverEngine(.record(try RecordingFiles(path: directory)))
        let started = ContinuousClock.now
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(monitor, listener, "s2s-1")
        let flowing = await receiverEvents.first(where: \.isFlowing)
        #expect(flowing != nil, "the receiver never decoded audio: \(receiverEvents.events)")
        let flowingAfter = ContinuousClock.now - started
        #expect(await senderEvents.first(where: \.isFlowing) != nil)
        try await Task.sleep(for: .milliseconds(2_600))
        await receiver.stop()
        await sender.stop()
        // The end is reported by the pipeline's own thread: on a loaded machine it is recorded a moment after stop().
        #expect(await receiverEvents.finished(), "no end reported: \(receiverEvents.events)")
        #expect(receiverEvents.events.last?.endReason == "stopped")
        #expect(await MediaTestSupport.released(receiver))
        #expect(await MediaTestSupport.released(sender))

        let wav = try WAVRecording(contentsOf: directory.appendingPathComponent("s2s-1.wav"))
        #expect(wav.sampleRate == 48_000)
        #expect(wav.channels == 1)
        #expect(wav.duration >= 2.0, "recorded \(wav.duration) s")
        // The last second: the tone, at about its level (volume 0.5 → RMS 0.35) and frequency.
        let tail = wav.samples.suffix(48_000)
        let rms = WAVRecording.rms(tail)
        #expect(rms > 0.15 && rms < 0.6, "RMS \(rms)")
        let frequency = WAVRecording.zeroCrossingFrequency(tail, sampleRate: 48_000)
        #expect(abs(frequency - 440) < 25, "frequency \(frequency) Hz")
        print("Swift↔Swift: receiver flowing after \(flowingAfter); recorded \(wav.duration) s, RMS \(rms)")
    }

    /// Issue 20: the answerer starts its connectivity checks as soon as it has the offer and the sender's
    /// candidates, while its answer still travels over the control channel (or waits in a starved process). When
    /// the checks came first, libnice (0.1.21) paired them with the sender's host candidate before it knew the
    /// answerer's credentials, failed that pair at its first check, and declared ICE failed 5 s later unless the
    /// answer had arrived by then: a Listen that never played. The sender now gathers only once the answer is in,
    /// so a late answer only delays the stream. (With the old order this test fails: "ICE failed" on both sides.)
    @Test("a stream connects when the answer arrives 6 s after the answerer's first connectivity checks")
    func slowAnswerStillConnects() async throws {
        let monitor = try MediaTestSupport.senderEngine()
        let listener = try MediaTestSupport.receiverEngine()
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(
            monitor, listener, "slow-answer", answerDelay: .seconds(6)
        )
        let flowing = await receiverEvents.first(timeout: .seconds(20)) { $0.isFlowing || $0.isEnded }
        #expect(flowing?.isFlowing == true, "the receiver never decoded audio: \(receiverEvents.events)")
        #expect(
            await senderEvents.first(timeout: .seconds(10)) { $0.isFlowing || $0.isEnded }?.isFlowing == true,
            "sender: \(senderEvents.events)")
        await receiver.stop()
        await sender.stop()
        #expect(await MediaTestSupport.released(receiver))
        #expect(await MediaTestSupport.released(sender))
    }

    @Test("a receiver refuses a sender whose DTLS certificate does not match the offer's fingerprint")
    func receiverRefusesAForeignCertificate() async throws {
        let monitor = try MediaTestSupport.senderEngine()
        let listener = try MediaTestSupport.receiverEngine()
        let impostor = try MediaTestSupport.certificate().sdpFingerprint
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(monitor, listener, "s2s-mitm") {
            offer in
            SessionDescriptionText.replacingFingerprints(in: offer, with: impostor)
        }
        let ended = await receiverEvents.first(where: \.isEnded)
        #expect(ended?.endReason?.contains("fingerprint") == true, "ended: \(ended?.endReason ?? "never")")
        let flowed = receiverEvents.events.contains(where: \.isFlowing)
        #expect(!flowed)
        #expect(senderEvents.events.first?.localDescription != nil)
        await sender.stop()
        await receiver.stop()
        #expect(await MediaTestSupport.released(receiver))
        #expect(await MediaTestSupport.released(sender))
    }

    // MARK: - Lifecycle

    @Test("stopping a sender before it is answered ends it once and releases the pipeline")
    func stopBeforeAnswerReleasesEverything() async throws {
        let engine = try MediaTestSupport.senderEngine(.test(.silence))
        let sender = try await engine.makeSender(sessionId: "early-stop", mediaType: .audio)
        let recorder = EventRecorder(sender)
        #expect(await recorder.first(where: { $0.localDescription != nil }) != nil)
        await sender.stop()
        await sender.stop()
        #expect(await recorder.finished())
        #expect(recorder.events.filter(\.isEnded).count == 1)
        #expect(await MediaTestSupport.released(sender))
        await #expect(throws: MediaError.self) {
            try await sender.addRemoteCandidate(.init(candidate: "", sdpMid: nil, sdpMLineIndex: 0))
        }
    }

    @Test("a sender refuses an answer that is not SDP (and stays usable)")
    func senderRefusesBadAnswers() async throws {
        let engine = try MediaTestSupport.senderEngine(.test(.silence))
        let sender = try await engine.makeSender(sessionId: "bad-answer", mediaType: .audio)
        let recorder = EventRecorder(sender)
        #expect(await recorder.first(where: { $0.localDescription != nil }) != nil)
        await #expect(throws: MediaError.self) { try await sender.setRemoteDescription(sdp: "hello") }
        await #expect(throws: MediaError.self) { try await sender.setRemoteDescription(sdp: "v=0\r\ns=-\r\n") }
        await sender.stop()
        #expect(await MediaTestSupport.released(sender))
    }

    @Test("a sender whose audio input cannot be opened fails to start with a message naming the input")
    func unopenableInputFailsToStart() async throws {
        let engine = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), audioSource: .alsa(device: "hw:97,0"),
                iceAddresses: ["127.0.0.1"]
            )
        )
        do {
            _ = try await engine.makeSender(sessionId: "no-input", mediaType: .audio)
            Issue.record("a sender started on a missing ALSA device")
        } catch let error as MediaError {
            #expect(error.code == .pipelineFailed)
            #expect(error.message.contains("alsa:hw:97,0"), "\(error.message)")
        }
    }

    // MARK: - Helpers

    /// A sender of `monitor` and a receiver of `listener` signaling to each other directly (`tamper` may alter
    /// the offer on its way).
    static func connect(
        _ monitor: GStreamerMediaEngine,
        _ listener: GStreamerMediaEngine,
        _ sessionId: String,
        answerDelay: Duration = .zero,
        tamper: @escaping @Sendable (String) -> String = { $0 }
    ) async throws -> (any MediaPeer, any MediaPeer, EventRecorder, EventRecorder) {
        let receiver = try await listener.makeReceiver(sessionId: sessionId, mediaType: .audio)
        let sender = try await monitor.makeSender(sessionId: sessionId, mediaType: .audio)
        let receiverEvents = EventRecorder(receiver) { event in
            switch event {
            case .localDescription(let sdp):
                // A slow signaling path delays the answer and the candidates behind it, not the answerer's checks.
                if answerDelay > .zero { try? await Task.sleep(for: answerDelay) }
                try? await sender.setRemoteDescription(sdp: sdp)
            case .localCandidate(let candidate): try? await sender.addRemoteCandidate(candidate)
            default: break
            }
        }
        let senderEvents = EventRecorder(sender) { event in
            switch event {
            case .localDescription(let sdp):
                do { try await receiver.setRemoteDescription(sdp: tamper(sdp)) } catch {
                    print("receiver refused the offer: \(error)")
                }
            case .localCandidate(let candidate): try? await receiver.addRemoteCandidate(candidate)
            default: break
            }
        }
        return (sender, receiver, senderEvents, receiverEvents)
    }
}
