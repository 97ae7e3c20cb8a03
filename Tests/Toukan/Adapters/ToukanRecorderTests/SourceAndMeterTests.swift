import AudioCapture
import Testing

@testable import ToukanRecorder

@Suite("Recording sources and the level meter")
struct SourceAndMeterTests {
    @Test(
        "every --audio-source form parses and prints back",
        arguments: [
            "auto", "pulse", "pulse:mic", "alsa:hw:1,0", "file:/a:b.wav", "test:cry", "test:tone", "test:speech",
        ]
    )
    func roundTrip(text: String) throws {
        #expect(try RecordingSource(parsing: text).description == text)
    }

    @Test("an unknown source is refused with the accepted forms")
    func refused() {
        #expect(throws: RecorderError.self) { try RecordingSource(parsing: "test:music") }
        do {
            _ = try RecordingSource(parsing: "mic")
        } catch {
            #expect(error.code == .invalidSource)
            #expect(error.message.contains("test:speech") && error.message.contains("pulse[:DEVICE]"), "\(error)")
        }
    }

    @Test("levels: one per interval across buffer boundaries, peak and RMS in dBFS, silence at the floor")
    func meter() {
        var meter = LevelMeter(interval: 4)
        #expect(meter.add([0.5, -0.5, 0.5], firstIndex: 0).isEmpty)
        let levels = meter.add([-0.5, 0, 0, 0, 0, 1], firstIndex: 3)
        #expect(levels.count == 2)
        #expect(abs(levels[0].peakDecibels - -6.02) < 0.01 && abs(levels[0].rmsDecibels - -6.02) < 0.01)
        #expect(levels[0].end == 4 && levels[1].end == 8)
        #expect(levels[1].peakDecibels == AudioLevel.floorDecibels && levels[1].rmsDecibels == AudioLevel.floorDecibels)
    }
}
