import SafetyDetection
import Testing

/// The frame measurements on generated nursery scenes: movement inside the sleep area, not outside it, and not
/// when only the light changes; whether a frame can be judged.
@Suite("FrameAnalyzer: movement without lighting changes, and judgeable frames")
struct FrameAnalyzerTests {
    /// The sleep area of the scenes: the cot, right of the curtain.
    static let cot = try! SleepArea(x: 0.2, y: 0.1, width: 0.75, height: 0.8)

    /// Changed fractions of frames 1…n (frame 0 primes the analyzer).
    static func changes(_ count: Int, area: SleepArea = cot, scene: (Int) -> NurseryScene) -> [Double] {
        var analyzer = FrameAnalyzer()
        return (0...count).map { analyzer.analyze(scene($0).frame($0), area: area).changedFraction }.dropFirst()
            .map { $0 }
    }

    @Test("a sleeping baby under sensor noise: no movement in 25 frames")
    func stillUnderNoise() {
        let changes = Self.changes(25) { _ in NurseryScene() }
        #expect(changes.max()! < 0.01, "\(changes)")
    }

    @Test("a baby shifting by 2 pixels a frame is movement")
    func shifting() {
        let changes = Self.changes(10) { number in
            var scene = NurseryScene()
            scene.baby?.x = 70 + 2 * Double(number)
            return scene
        }
        #expect(changes.min()! >= 0.01, "\(changes)")
    }

    /// Ways the light changes while nothing moves.
    enum LightChange: String, CaseIterable, Sendable {
        case lampOn, dimmed, exposureRamp

        /// Gain and offset of frame `number`.
        func light(_ number: Int) -> (gain: Double, offset: Double) {
            switch self {
            case .lampOn: number >= 3 ? (1.5, 20) : (1, 0)
            case .dimmed: number >= 3 ? (0.6, -5) : (1, 0)
            case .exposureRamp: (1 + 0.04 * Double(number), 0)
            }
        }
    }

    @Test(
        "the light changes but nothing moves: a lamp switched on (the baby saturates), dimmed, an exposure ramp",
        arguments: LightChange.allCases)
    func lightOnly(change: LightChange) {
        var analyzer = FrameAnalyzer()
        var measurements: [FrameAnalyzer.Measurement] = []
        for number in 0...10 {
            var scene = NurseryScene()
            (scene.gain, scene.offset) = change.light(number)
            measurements.append(analyzer.analyze(scene.frame(number), area: Self.cot))
        }
        let moved = measurements.dropFirst().map(\.changedFraction)
        #expect(moved.max()! < 0.01, "\(change): \(moved)")
        if change != .exposureRamp { #expect(measurements[3].lightChanged, "\(change)") }
    }

    @Test("a light switched on in a dark room is a lighting change, not movement; the dark frames are too dark")
    func lightInTheDark() {
        var analyzer = FrameAnalyzer()
        var dark = NurseryScene()
        dark.gain = 0.15
        let before = analyzer.analyze(dark.frame(0), area: Self.cot)
        #expect(before.judgement == .tooDark)
        let after = analyzer.analyze(NurseryScene().frame(1), area: Self.cot)
        #expect(after.lightChanged && after.changedFraction == 0 && after.judgement == .judgeable, "\(after)")
    }

    @Test("a curtain swaying outside the sleep area is not movement; inside the whole frame it would be")
    func curtainOutside() {
        let sway = { (number: Int) -> NurseryScene in
            var scene = NurseryScene()
            scene.curtain = 14 + 10 * Double(number % 2)
            return scene
        }
        #expect(Self.changes(8, scene: sway).max()! == 0)
        #expect(Self.changes(8, area: .wholeFrame, scene: sway).min()! >= 0.01)
    }

    @Test("too dark, too bright, an empty plain cot, and a normal one")
    func judgements() {
        func judge(_ scene: NurseryScene) -> FrameAnalyzer.Judgement {
            var analyzer = FrameAnalyzer()
            return analyzer.analyze(scene.frame(0), area: Self.cot).judgement
        }
        var dark = NurseryScene()
        dark.gain = 0.1
        var bright = NurseryScene()
        bright.offset = 140
        bright.noise = 0
        var empty = NurseryScene()
        empty.baby = nil
        empty.plain = true
        #expect(judge(dark) == .tooDark)
        #expect(judge(bright) == .tooBright)
        #expect(judge(empty) == .empty)
        #expect(judge(NurseryScene()) == .judgeable)
        var patternedEmpty = NurseryScene()
        patternedEmpty.baby = nil
        #expect(judge(patternedEmpty) == .judgeable, "a patterned sheet cannot be told from a baby (a known limit)")
    }

    /// An infrared night picture: grey, low in contrast and grainy.
    static func infrared(gain: Double = 0.3, offset: Double = 20, noise: Int = 10) -> NurseryScene {
        var scene = NurseryScene()
        scene.gain = gain
        scene.offset = offset
        scene.noise = noise
        return scene
    }

    @Test(
        "an infrared picture (grey, low contrast, grainy) is judged: still, moving, empty; a dim one is not too dark")
    func infraredPicture() {
        var analyzer = FrameAnalyzer()
        let still = (0...25).map { analyzer.analyze(Self.infrared().frame($0), area: Self.cot) }
        #expect(still.allSatisfy { $0.judgement == .judgeable }, "\(still.map(\.judgement))")
        #expect(still.dropFirst().map(\.changedFraction).max()! < 0.01, "\(still.map(\.changedFraction))")
        let moving = Self.changes(10) { number in
            var scene = Self.infrared()
            scene.baby?.x = 70 + 2 * Double(number)
            return scene
        }
        #expect(moving.min()! >= 0.01, "\(moving)")
        var empty = Self.infrared()
        empty.baby = nil
        empty.plain = true
        var emptyAnalyzer = FrameAnalyzer()
        let emptyJudged = (0...3).map { emptyAnalyzer.analyze(empty.frame($0), area: Self.cot).judgement }
        #expect(emptyJudged.dropFirst().allSatisfy { $0 == .empty }, "\(emptyJudged)")
        // A dim infrared picture (mean level ≈ 31) still shows the baby.
        var dimAnalyzer = FrameAnalyzer()
        let dim = (0...3).map { dimAnalyzer.analyze(Self.infrared(gain: 0.2, offset: 6).frame($0), area: Self.cot) }
        #expect(dim.dropFirst().allSatisfy { $0.judgement == .judgeable }, "\(dim.map(\.judgement))")
    }

    @Test("a picture at the edge of too dark does not flip with every frame: leaving a judgement takes a clear step")
    func boundsHysteresis() {
        var analyzer = FrameAnalyzer()
        let judged = (0..<20).map { number -> FrameAnalyzer.Judgement in
            var scene = NurseryScene()
            scene.plain = true
            scene.baby = nil
            scene.offset = number % 2 == 0 ? 25 : 30  // a flicker across the dark level (28) of a featureless area
            scene.gain = 0.02
            return analyzer.analyze(scene.frame(number), area: Self.cot).judgement
        }
        #expect(Set(judged) == [.tooDark], "\(judged)")
    }
}
