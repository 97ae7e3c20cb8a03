import Foundation
import SafetyDetection
import SoundDetection
import TestSupport
import Testing

/// The cry classifier on the generated clip set (``CrySet``): what it hears per category, and the precision and
/// recall the module README reports.
@Suite(
    "CryDetector: crying told from speech, music, noise, a fan, a dog and doors", .heavy(cores: 1, "signal synthesis"))
struct CryDetectorTests {
    /// Whether the detector hears crying anywhere in the clip, fed in uneven chunks as a microphone delivers.
    static func hears(_ samples: [Float], sensitivity: CryDetector.Sensitivity = .medium) -> [CryDetector.Detection] {
        var detector = CryDetector(sensitivity: sensitivity)
        var detections: [CryDetector.Detection] = []
        var start = 0
        var chunk = 160
        while start < samples.count {
            let end = min(samples.count, start + chunk)
            detections += detector.process(Array(samples[start..<end]))
            start = end
            chunk = chunk == 160 ? 1_024 : 160
        }
        return detections
    }

    @Test("the clip set, per category and sensitivity: precision and recall (printed for the README)")
    func clipSet() async throws {
        guard (try? Subprocess.resolve("espeak-ng")) != nil || !InteropPeers.required else {
            Issue.record("espeak-ng is needed for the speech clips; make test installs it")
            return
        }
        let generating = ContinuousClock.now
        let clips = try await CrySet.clips()
        print("generated \(clips.count) clips in \(ContinuousClock.now - generating)")
        let judging = ContinuousClock.now
        defer { print("judged them 3 times in \(ContinuousClock.now - judging)") }
        let labelled = clips.map {
            Labelled(name: $0.name, category: $0.category.rawValue, isCry: $0.category.isCry, samples: $0.samples)
        }
        let (lines, figures, counts) = Self.evaluate(labelled, categories: CrySet.Category.allCases.map(\.rawValue))
        print(lines.joined(separator: "\n"))
        let heardBy = counts.mapValues { byName in
            Dictionary(uniqueKeysWithValues: CrySet.Category.allCases.map { ($0, byName[$0.rawValue] ?? 0) })
        }

        let medium = heardBy[.medium] ?? [:]
        #expect(medium[.cry] == 8, "every clean cry is heard at medium sensitivity")
        #expect((medium[.cryInNoise10dB] ?? 0) >= 7, "cries over white noise at 10 dB SNR")
        for category in [CrySet.Category.whiteNoise, .fan, .door] {
            #expect(medium[category] == 0, "no false alarm from \(category.rawValue)")
        }
        #expect((figures[.medium]?.precision ?? 0) >= 0.9, "\(figures)")
        #expect((figures[.medium]?.recall ?? 0) >= 0.7, "\(figures)")
        #expect((figures[.low]?.precision ?? 0) >= (figures[.high]?.precision ?? 0))
        #expect((figures[.high]?.recall ?? 0) >= (figures[.low]?.recall ?? 0))
    }

    /// A clip with its label.
    struct Labelled {
        var name: String
        var category: String
        var isCry: Bool
        var samples: [Float]
    }

    /// What each sensitivity hears of `clips`: the README's table (one row per category, then precision and recall),
    /// the figures, and how many clips of each category were heard.
    static func evaluate(_ clips: [Labelled], categories: [String]) -> (
        lines: [String], figures: [CryDetector.Sensitivity: (precision: Double, recall: Double)],
        heard: [CryDetector.Sensitivity: [String: Int]]
    ) {
        var lines: [String] = ["| clips | low | medium | high |", "|---|---|---|---|"]
        var figures: [CryDetector.Sensitivity: (precision: Double, recall: Double)] = [:]
        var heardBy: [CryDetector.Sensitivity: [String: Int]] = [:]
        for sensitivity in CryDetector.Sensitivity.allCases {
            var truePositive = 0
            var falsePositive = 0
            var falseNegative = 0
            var falseAlarms: [String] = []
            defer { if !falseAlarms.isEmpty { print("false alarms at \(sensitivity): \(falseAlarms)") } }
            for clip in clips {
                let heard = !hears(clip.samples, sensitivity: sensitivity).isEmpty
                if heard, !clip.isCry { falseAlarms.append(clip.name) }
                heardBy[sensitivity, default: [:]][clip.category, default: 0] += heard ? 1 : 0
                switch (clip.isCry, heard) {
                case (true, true): truePositive += 1
                case (false, true): falsePositive += 1
                case (true, false): falseNegative += 1
                case (false, false): break
                }
            }
            figures[sensitivity] = (
                Double(truePositive) / Double(max(1, truePositive + falsePositive)),
                Double(truePositive) / Double(max(1, truePositive + falseNegative))
            )
        }
        for category in categories {
            let inCategory = clips.filter { $0.category == category }
            let cells = CryDetector.Sensitivity.allCases.map { "\(heardBy[$0]?[category] ?? 0)/\(inCategory.count)" }
            let isCry = inCategory.first?.isCry ?? false
            lines.append(
                "| \(category) (\(isCry ? "heard" : "false alarms")) | " + cells.joined(separator: " | ") + " |")
        }
        for (name, value) in [("precision", \(precision: Double, recall: Double).precision), ("recall", \.recall)] {
            let cells = CryDetector.Sensitivity.allCases.map {
                String(format: "%.2f", figures[$0].map { $0[keyPath: value] } ?? 0)
            }
            lines.append("| **\(name)** | " + cells.joined(separator: " | ") + " |")
        }
        return (lines, figures, heardBy)
    }

    @Test("the held-out set (another generator, never used for tuning): precision and recall printed for the README")
    func heldOutSet() async throws {
        guard let python = InteropPeers.python, (try? Subprocess.resolve("espeak-ng")) != nil else {
            Issue.record("the held-out set needs the test venv's Python and espeak-ng; make test installs both")
            return
        }
        let directory = try Subprocess.temporaryDirectory("heldout-cries")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/cribalert/heldout_cries.py").path
        let made = try await Subprocess.run(python, [script, directory.path])
        try #require(made.status == 0, "heldout_cries.py: \(made.stderrText)")
        print(made.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        let manifest =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: directory.appendingPathComponent("manifest.json"))) as? [[String: Any]] ?? []
        var clips: [Labelled] = []
        var categories: [String] = []
        for entry in manifest {
            guard let file = entry["file"] as? String, let category = entry["category"] as? String,
                let isCry = entry["cry"] as? Bool
            else { continue }
            let (rate, samples) = try CrySet.readWAV(Data(contentsOf: directory.appendingPathComponent(file)))
            clips.append(
                Labelled(
                    name: file, category: category, isCry: isCry,
                    samples: CrySet.resample(samples, from: rate, to: CrySet.rate)))
            if !categories.contains(category) { categories.append(category) }
        }
        #expect(clips.count >= 60, "the generator made \(clips.count) clips")
        let (lines, figures, heard) = Self.evaluate(clips, categories: categories)
        print(lines.joined(separator: "\n"))
        // What this set is for: figures nobody tuned for. The bounds say the detector is not useless on it.
        #expect((figures[.medium]?.precision ?? 0) >= HeldOut.minimumPrecision, "\(figures)")
        #expect((figures[.medium]?.recall ?? 0) >= HeldOut.minimumRecall, "\(figures)")
        #expect((heard[.medium]?["noise-machine"] ?? 0) == 0, "a white-noise machine is never crying")
    }

    /// Floors under the held-out figures at medium sensitivity, a little below the first measurement (2026-11-29:
    /// precision 0.83, recall 0.14): they catch a change that makes the detector worse on sounds nobody tuned for.
    /// They are not targets; the recall is the detector's known weakness (module README).
    enum HeldOut {
        static let minimumPrecision = 0.75
        static let minimumRecall = 0.1
    }

    @Test("the monitor's test:cry source is heard; silence is not; chunking never changes what is heard")
    func testSources() {
        var cry = TestAudioSource(.cry)
        let samples = cry.next(16_000 * 12)
        let heard = Self.hears(samples)
        #expect(heard.first.map { $0.offset > 2 && $0.offset < 5 } == true, "during the first burst: \(heard)")
        var silence = TestAudioSource(.silence)
        #expect(Self.hears(silence.next(16_000 * 12)).isEmpty)
        var whole = CryDetector()
        #expect(whole.process(samples) == heard)
    }

    @Test("an ongoing cry is reported again every 10 s, not every frame")
    func repeats() {
        var random = SplitMix64(seed: 99)
        var long: [Float] = []
        for _ in 0..<5 { long += CrySet.cry(&random) }  // 30 s of crying
        let heard = Self.hears(long)
        #expect(heard.count >= 3 && heard.count <= 4, "\(heard.map(\.offset))")
        #expect(zip(heard, heard.dropFirst()).allSatisfy { $1.offset - $0.offset >= 10 })
        #expect(heard.allSatisfy { $0.confidence > 0.5 && $0.confidence <= 1 })
    }
}
