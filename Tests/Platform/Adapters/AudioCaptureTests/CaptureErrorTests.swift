import CGStreamer
import Foundation
import GStreamer
import TestSupport
import Testing

@testable import AudioCapture

/// Failures end the stream quickly with a message that says what to do.
@Suite("Capture errors")
struct CaptureErrorTests {
    /// Starts a capture that must fail, and returns its error.
    func failure(_ source: AudioSourceSpec) async throws -> AudioCaptureError? {
        let capture = try GStreamerAudioCapture(source: source)
        let outcome = try await firstOutcome(of: capture, timeout: .seconds(10))
        try await waitUntilReleased(capture)
        guard case .failed(let error) = outcome else {
            Issue.record("capturing \(source) did not fail with an AudioCaptureError: \(outcome)")
            return nil
        }
        return error
    }

    @Test("a missing file")
    func missingFile() async throws {
        let directory = try Subprocess.temporaryDirectory("audio capture 'missing'")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("no such \"file\".wav").path
        let error = try #require(try await failure(.file(path: path)))
        #expect(error.code == .fileUnreadable)
        #expect(error.message.hasPrefix("cannot read audio file '\(path)'"))
        #expect(error.message.contains("check the path given to --audio-source file:PATH"))
    }

    @Test("a directory instead of a file")
    func directory() async throws {
        let directory = try Subprocess.temporaryDirectory("audio capture dir")
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(try await failure(.file(path: directory.path)))
        #expect(error.code == .fileUnreadable)
        #expect(error.message.contains("is a directory"))
    }

    @Test("a file of random bytes")
    func randomBytes() async throws {
        let directory = try Subprocess.temporaryDirectory("audio capture random")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("noise.wav")
        var random = SplitMix64(seed: 0xC41B_CA11)
        try Data(random.bytes(20_000)).write(to: url)
        let error = try #require(try await failure(.file(path: url.path)))
        #expect(error.code == .unsupportedFormat)
        #expect(error.message.hasPrefix("'\(url.path)' is not an audio file GStreamer can decode"))
        #expect(error.message.contains("use a WAV, FLAC, Ogg Vorbis/Opus or MP3 file"))
    }

    @Test("a nonexistent ALSA device", arguments: ["nonexistent-device", "hw:97"])
    func alsaDevice(device: String) async throws {
        let error = try #require(try await failure(.alsa(device: device)))
        #expect(error.code == .deviceUnavailable)
        #expect(error.message.hasPrefix("cannot open ALSA capture device '\(device)'"))
        #expect(error.message.contains("arecord -l"))
    }

    /// Whether this machine has a PulseAudio server or ALSA capture hardware `auto` could use.
    static var hasPulseServer: Bool {
        let environment = ProcessInfo.processInfo.environment
        if environment["PULSE_SERVER"] != nil { return true }
        let runtime = environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
        return FileManager.default.fileExists(atPath: "\(runtime)/pulse/native")
            || FileManager.default.fileExists(atPath: "/run/pulse/native")
    }

    static var hasSoundHardware: Bool {
        FileManager.default.fileExists(atPath: "/dev/snd")
    }

    @Test("auto: records from the system input, or says clearly that there is none (never silently records silence)")
    func auto() async throws {
        let capture = try GStreamerAudioCapture(source: .auto)
        let outcome = try await firstOutcome(of: capture)
        await capture.stop()
        try await waitUntilReleased(capture)
        if !Self.hasPulseServer && !Self.hasSoundHardware {
            // autoaudiosrc would fall back to a silent test source here: it must be reported instead.
            guard case .failed(let error) = outcome else {
                Issue.record("auto without any input did not fail: \(outcome)")
                return
            }
            #expect(error.code == .noInputDevice)
            #expect(error.message.hasPrefix("no audio input found"))
            #expect(error.message.contains("is PulseAudio running? Try --audio-source alsa:hw:0 or file:PATH"))
        } else {
            print("note: this machine has an audio input; auto outcome: \(outcome)")
            switch outcome {
            case .deliveredAudio: break
            case .failed(let error): #expect([.noInputDevice, .deviceUnavailable].contains(error.code))
            default: Issue.record("auto ended without audio or a clear error: \(outcome)")
            }
        }
    }

    @Test("pulse: records from the server, or says clearly that it is not running")
    func pulse() async throws {
        let capture = try GStreamerAudioCapture(source: .pulse(device: nil))
        let outcome = try await firstOutcome(of: capture)
        await capture.stop()
        try await waitUntilReleased(capture)
        if !Self.hasPulseServer {
            guard case .failed(let error) = outcome else {
                Issue.record("pulse without a server did not fail: \(outcome)")
                return
            }
            #expect(error.code == .deviceUnavailable)
            #expect(error.message.hasPrefix("cannot record from PulseAudio"))
            #expect(error.message.contains("running for this user?"))
        } else {
            print("note: this machine has a PulseAudio server; pulse outcome: \(outcome)")
            if case .deliveredAudio = outcome {} else { Issue.record("pulse with a server: \(outcome)") }
        }
    }

    @Test("the missing-plugin message names the Debian package to install")
    func missingPluginMessage() {
        let error = AudioCaptureError(GStreamerError(MissingElements(["alsasrc", "pulsesrc"])))
        #expect(error.code == .missingPlugin)
        #expect(error.message.contains("install gstreamer1.0-alsa and gstreamer1.0-pulseaudio"))
    }

    @Test("GStreamer errors map to actionable errors for each source")
    func mapping() {
        let missingDecoder = GStreamerFailure(
            domain: .core,
            code: Int32(GST_CORE_ERROR_MISSING_PLUGIN.rawValue),
            message: "Your GStreamer installation is missing a plug-in."
        )
        #expect(AudioCaptureError(missingDecoder, source: .file(path: "/a.m4a")).code == .missingPlugin)
        let refused = GStreamerFailure(domain: .resource, code: 3, message: "Failed to connect: Connection refused")
        let unknownSource = GStreamerFailure(
            domain: .resource,
            code: 3,
            message: "Failed to connect stream: No such entity"
        )
        let mic = AudioSourceSpec.pulse(device: "mic")
        #expect(AudioCaptureError(refused, source: mic).message.hasPrefix("cannot record from PulseAudio"))
        #expect(AudioCaptureError(unknownSource, source: mic).message.contains("pactl list short sources"))
        #expect(AudioCaptureError(refused, source: .auto).code == .noInputDevice)
        let serverGone = GStreamerFailure(domain: .resource, code: 3, message: "Disconnected: Connection terminated")
        for source in [mic, AudioSourceSpec.pulse(device: nil)] {
            let lost = AudioCaptureError(serverGone, source: source)
            #expect(lost.code == .deviceUnavailable)
            #expect(lost.message.hasPrefix("the PulseAudio server stopped while recording"), "\(lost.message)")
        }
        let other = GStreamerFailure(domain: .stream, code: 1, message: "Internal data stream error.")
        #expect(AudioCaptureError(other, source: .alsa(device: nil)).code == .pipelineFailed)
    }
}
