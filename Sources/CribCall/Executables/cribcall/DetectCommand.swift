import ArgumentParser
import CribCallApp
import Foundation

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
        var detection = try reportingFailures("detect") {
            try NoiseDetectionRun(
                sampleRate: sampleRate, threshold: threshold, minDurationMs: minDurationMs,
                cooldownSeconds: cooldown, json: json)
        }
        detection.run(reading: .standardInput) { print($0) }
    }
}
