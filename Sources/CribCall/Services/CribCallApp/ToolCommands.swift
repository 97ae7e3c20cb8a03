import CanonicalJSON
public import Foundation
import SoundDetection

/// `cribcall canonicalize`: JSON → RFC 8785 (JCS) canonical bytes.
public enum Canonicalizer {
    /// Inputs larger than this are refused rather than read into memory without bound.
    public static let maxInputBytes = 64 << 20

    /// The canonical form of `input`; invalid JSON (duplicate keys, lone surrogates, numbers that are not finite
    /// doubles) fails with exit status 2.
    public static func canonicalize(_ input: Data) throws -> [UInt8] {
        do {
            guard input.count <= maxInputBytes else {
                throw CommandFailure("input is larger than \(maxInputBytes >> 20) MiB")
            }
            let parser = JSONParser(limits: .init(maxDepth: 512, maxBytes: maxInputBytes))
            return try parser.parse(input).canonicalBytes()
        } catch {
            throw CommandFailure("invalid JSON: \(error)", kind: .failure(status: 2))
        }
    }
}

/// `cribcall detect`: the monitor's sound detection over raw audio (signed 16-bit little-endian mono PCM).
public struct NoiseDetectionRun {
    private var detector: SoundDetector
    private let json: Bool
    private var pending: [UInt8] = []
    private var samples: [Int16] = []
    private var events = 0

    /// - Throws: ``CommandFailure`` (usage) when a setting is out of range.
    public init(sampleRate: Int, threshold: Int, minDurationMs: Int, cooldownSeconds: Int, json: Bool) throws {
        do {
            let configuration = try SoundDetectorConfiguration(
                threshold: threshold, minDurationMs: minDurationMs, cooldownSeconds: cooldownSeconds)
            detector = try SoundDetector(configuration: configuration, inputSampleRate: sampleRate)
        } catch {
            throw CommandFailure.usage("\(error)")
        }
        self.json = json
    }

    /// Reads `input` to its end and writes one line per noise event, then a summary, to `output`.
    public mutating func run(reading input: FileHandle, writing output: (String) -> Void) {
        while true {
            let chunk = input.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            for line in feed(chunk) { output(line) }
        }
        output(summary)
    }

    /// The lines for the noise events `bytes` completes (a trailing odd byte waits for the next chunk).
    public mutating func feed(_ bytes: Data) -> [String] {
        pending.append(contentsOf: bytes)
        let usable = pending.count & ~1
        Self.decodeS16LE(pending[..<usable], into: &samples)
        let detections = detector.process(int16: samples)
        pending.removeFirst(usable)
        events += detections.count
        return detections.map(line)
    }

    /// The last line: how many events in how much audio.
    public var summary: String {
        if json {
            return JSONValue.object([
                "event": "end", "events": .number(Double(events)),
                "audioMs": .number(Double(detector.processedDurationMs)),
            ]).canonicalString
        }
        return "\(events) noise event(s) in \(Double(detector.processedDurationMs) / 1000) s of audio"
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

    func line(_ detection: NoiseDetection) -> String {
        if json {
            return JSONValue.object([
                "event": "noise", "offsetMs": .number(Double(detection.offsetMs)),
                "peakLevel": .number(Double(detection.peakLevel)),
                "durationMs": .number(Double(detection.durationMs)),
            ]).canonicalString
        }
        let seconds = String(format: "%.2f", Double(detection.offsetMs) / 1000)
        return "noise at \(seconds) s: peak level \(detection.peakLevel), loud for \(detection.durationMs) ms"
    }
}
