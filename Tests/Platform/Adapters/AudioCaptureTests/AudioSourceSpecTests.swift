import AudioCapture
import SoundDetection
import Testing

@Suite("--audio-source parsing")
struct AudioSourceSpecTests {
    static let valid: [(String, AudioSourceSpec)] = [
        ("auto", .auto),
        ("pulse", .pulse(device: nil)),
        ("pulse:alsa_input.usb-mic.mono-fallback", .pulse(device: "alsa_input.usb-mic.mono-fallback")),
        ("alsa", .alsa(device: nil)),
        ("alsa:hw:0", .alsa(device: "hw:0")),
        ("alsa:plughw:1,0", .alsa(device: "plughw:1,0")),
        ("file:/tmp/cry.wav", .file(path: "/tmp/cry.wav")),
        ("file:relative/cry.flac", .file(path: "relative/cry.flac")),
        ("file:/tmp/a b 'c' \"d\" ! fakesrc:e.ogg", .file(path: "/tmp/a b 'c' \"d\" ! fakesrc:e.ogg")),
        ("test:cry", .test(.cry)),
        ("test:silence", .test(.silence)),
    ]

    @Test("every accepted form parses, and description gives it back", arguments: valid)
    func parses(text: String, expected: AudioSourceSpec) throws {
        let spec = try AudioSourceSpec(parsing: text)
        #expect(spec == expected)
        #expect(spec.description == text)
        #expect(try AudioSourceSpec(parsing: spec.description) == spec)
    }

    static let invalid: [(String, String)] = [
        (
            "foo",
            "unknown audio source 'foo': use auto, pulse[:DEVICE], alsa[:DEVICE], file:PATH, test:cry or test:silence"
        ),
        ("", "unknown audio source '': use auto"),
        ("AUTO", "unknown audio source 'AUTO'"),
        ("auto:x", "invalid audio source 'auto:x': auto takes no argument; accepted: auto, pulse[:DEVICE]"),
        ("alsa:", "alsa: needs a device after the colon (e.g. alsa:hw:0), or use plain alsa for the default device"),
        ("pulse:", "pulse: needs a device after the colon"),
        ("file:", "file: needs a path"),
        ("file", "file: needs a path"),
        ("test:loud", "there is no test source 'loud' (use test:silence or test:cry)"),
        ("test", "there is no test source ''"),
        ("/tmp/cry.wav", "unknown audio source '/tmp/cry.wav'"),
    ]

    @Test("bad values fail with a message that lists the accepted forms", arguments: invalid)
    func rejects(text: String, expectedMessage: String) {
        #expect {
            try AudioSourceSpec(parsing: text)
        } throws: { error in
            guard let error = error as? AudioCaptureError else { return false }
            return error.code == .invalidSource && error.message.contains(expectedMessage)
                && error.message.contains("file:PATH")
        }
    }

    @Test("the syntax string for help texts names every form")
    func syntax() {
        #expect(AudioSourceSpec.syntax == "auto|pulse[:DEVICE]|alsa[:DEVICE]|file:PATH|test:silence|test:cry")
    }

    @Test("test sources are not captured through GStreamer")
    func testSourcesAreNotCaptured() {
        for kind in TestAudioSource.Kind.allCases {
            #expect {
                _ = try GStreamerAudioCapture(source: .test(kind))
            } throws: { error in
                (error as? AudioCaptureError)?.code == .unsupportedSource
                    && (error as? AudioCaptureError)?.message.contains("TestAudioSource") == true
            }
        }
    }
}
