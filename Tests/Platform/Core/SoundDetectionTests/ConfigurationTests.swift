import Foundation
import SoundDetection
import Testing

@Suite("Configuration validation")
struct ConfigurationTests {
    @Test("defaults match the protocol")
    func defaults() throws {
        let configuration = SoundDetectorConfiguration.default
        #expect(configuration.threshold == 60)
        #expect(configuration.minDurationMs == 600)
        #expect(configuration.cooldownSeconds == 10)
        #expect(try SoundDetectorConfiguration() == configuration)
    }

    @Test(
        "out-of-range values are rejected with the allowed range in the message",
        arguments: [
            (101, 600, 10, "threshold", "0...100"),
            (-1, 600, 10, "threshold", "0...100"),
            (60, 0, 10, "minDurationMs", "20...60000"),
            (60, 19, 10, "minDurationMs", "20...60000"),
            (60, 60_001, 10, "minDurationMs", "20...60000"),
            (60, 600, -1, "cooldownSeconds", "0...3600"),
            (60, 600, 3601, "cooldownSeconds", "0...3600"),
        ]
    )
    func rejects(threshold: Int, minDurationMs: Int, cooldownSeconds: Int, field: String, range: String) {
        do {
            _ = try SoundDetectorConfiguration(
                threshold: threshold,
                minDurationMs: minDurationMs,
                cooldownSeconds: cooldownSeconds
            )
            Issue.record("expected \(field) to be rejected")
        } catch {
            #expect(error.field == field)
            #expect(error.message.contains(range))
            #expect(error.description.contains(field))
            #expect(error.description.contains("got"))
        }
    }

    @Test("boundary values are accepted")
    func acceptsBoundaries() throws {
        _ = try SoundDetectorConfiguration(threshold: 0, minDurationMs: 20, cooldownSeconds: 0)
        _ = try SoundDetectorConfiguration(threshold: 100, minDurationMs: 60_000, cooldownSeconds: 3600)
    }

    @Test("the threshold message is exact")
    func exactMessage() {
        let expected = SoundDetectorConfigurationError(
            field: "threshold",
            message: "threshold must be in 0...100 (got 101)"
        )
        #expect(throws: expected) {
            try SoundDetectorConfiguration(threshold: 101)
        }
    }

    @Test("unsupported input sample rates are rejected with the allowed values")
    func sampleRate() throws {
        for rate in [44_100, 8_000, 0, -16_000] {
            #expect(throws: SoundDetectorError.unsupportedInputSampleRate(rate)) {
                try SoundDetector(configuration: .default, inputSampleRate: rate)
            }
            let description = SoundDetectorError.unsupportedInputSampleRate(rate).description
            #expect(description.contains("16000") && description.contains("48000") && description.contains("\(rate)"))
        }
        #expect(try SoundDetector(configuration: .default, inputSampleRate: 48_000).inputSampleRate == 48_000)
    }

    @Test("Codable round-trips, fills defaults and validates")
    func codable() throws {
        let configuration = try SoundDetectorConfiguration(threshold: 70, minDurationMs: 1000, cooldownSeconds: 30)
        let data = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(SoundDetectorConfiguration.self, from: data) == configuration)
        let partial = Data(#"{"threshold": 55}"#.utf8)
        let decoded = try JSONDecoder().decode(SoundDetectorConfiguration.self, from: partial)
        #expect(decoded == (try SoundDetectorConfiguration(threshold: 55)))
        let invalid = Data(#"{"threshold": 60, "minDurationMs": 5}"#.utf8)
        do {
            _ = try JSONDecoder().decode(SoundDetectorConfiguration.self, from: invalid)
            Issue.record("expected a decoding error")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription.contains("20...60000"))
            #expect((context.underlyingError as? SoundDetectorConfigurationError)?.field == "minDurationMs")
        }
    }

    @Test("validate and clamped handle values set after construction")
    func clamping() throws {
        var configuration = SoundDetectorConfiguration.default
        configuration.threshold = 250
        configuration.cooldownSeconds = -4
        #expect(throws: SoundDetectorConfigurationError.self) { try configuration.validate() }
        let clamped = configuration.clamped()
        #expect(clamped.threshold == 100 && clamped.cooldownSeconds == 0 && clamped.minDurationMs == 600)
        try clamped.validate()
    }
}
