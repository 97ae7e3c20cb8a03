import ArgumentParser
import CanonicalJSON
import Foundation
import SoundDetection

/// `cribcall detect`: runs the monitor's sound detection over raw audio on stdin and prints noise events.
struct DetectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Detect noise in raw audio (signed 16-bit little-endian mono PCM) read from stdin.",
        discussion: """
            Prints one line per noise event, or with --json one JSON object per line with "event":"noise". \
            Example: arecord -f S16_LE -r 48000 -c 1 -t raw | cribcall detect --sample-rate 48000
            """
    )

    @Option(help: "Input sample rate: 16000 or 48000.")
    var sampleRate = 48_000

    @Option(help: "Level threshold, 0…100 (dBFS −90…0 mapped to 0…100).")
    var threshold = 60

    @Option(help: "How long the level must stay at or above the threshold, in milliseconds.")
    var minDurationMs = 600

    @Option(help: "Seconds after an event before the next one can fire.")
    var cooldown = 10

    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    func run() throws {
        let configuration: SoundDetectorConfiguration
        var detector: SoundDetector
        do {
            configuration = try SoundDetectorConfiguration(
                threshold: threshold, minDurationMs: minDurationMs, cooldownSeconds: cooldown)
            detector = try SoundDetector(configuration: configuration, inputSampleRate: sampleRate)
        } catch {
            throw ValidationError("\(error)")
        }
        var pending: [UInt8] = []
        var samples: [Int16] = []
        var events = 0
        while true {
            let chunk = FileHandle.standardInput.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            pending.append(contentsOf: chunk)
            let usable = pending.count & ~1
            Self.decodeS16LE(pending[..<usable], into: &samples)
            let detections = detector.process(int16: samples)
            pending.removeFirst(usable)
            for detection in detections {
                events += 1
                report(detection)
            }
        }
        if json {
            print(
                JSONValue.object([
                    "event": "end", "events": .number(Double(events)),
                    "audioMs": .number(Double(detector.processedDurationMs)),
                ]).canonicalString)
        } else {
            print("\(events) noise event(s) in \(Double(detector.processedDurationMs) / 1000) s of audio")
        }
    }

    /// Decodes signed 16-bit little-endian PCM: byte pairs `(lo, hi)` → `Int16`, replacing `samples`' contents.
    ///
    /// - Parameters:
    ///   - bytes: An even number of bytes (a trailing odd byte is ignored).
    ///   - samples: Receives `bytes.count / 2` samples; its capacity is reused.
    static func decodeS16LE(_ bytes: ArraySlice<UInt8>, into samples: inout [Int16]) {
        samples.removeAll(keepingCapacity: true)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            samples.append(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8))
            index += 2
        }
    }

    func report(_ detection: NoiseDetection) {
        if json {
            print(
                JSONValue.object([
                    "event": "noise", "offsetMs": .number(Double(detection.offsetMs)),
                    "peakLevel": .number(Double(detection.peakLevel)),
                    "durationMs": .number(Double(detection.durationMs)),
                ]).canonicalString)
        } else {
            let seconds = String(format: "%.2f", Double(detection.offsetMs) / 1000)
            print("noise at \(seconds) s: peak level \(detection.peakLevel), loud for \(detection.durationMs) ms")
        }
    }
}
