/// What one frame shows inside the sleep area: its light, whether it can be judged, and how much of it changed
/// since the frames just before (``Configuration/lag``) once a change of light is taken out.
///
/// The area is cut into blocks (4×4 pixels by default) whose mean levels are compared frame to frame. A change of
/// light — a lamp switched on or dimmed, a camera's auto-exposure step, even one that saturates the brightest
/// parts — changes the levels of the picture without changing their order. So the previous frame's levels are
/// first carried through the light change, estimated by matching the two frames' level distributions (the block
/// at the q-th quantile before is expected at the q-th quantile now), and a block counts as changed when it is
/// more than ``Configuration/rawThreshold`` grey levels (scaled by the change of contrast) away from that
/// expectation. A baby moving changes which blocks are bright, not how many are, so it is seen. When the light
/// jumps and much of the picture changes at once (a light switched on in a dark room, where the picture itself
/// appears), the frame is a lighting change and reports no movement.
///
/// Night pictures — an infrared camera's grey, low-contrast, grainy frames, or a dim room — are judged too: the
/// thresholds follow the picture. A block's change and an edge count against the picture's own contrast (the
/// spread of its block levels, against ``Configuration/referenceSpread`` of a lit nursery) and never below what
/// its sensor noise makes (estimated each frame from how much a typical block moved since the last one). Only a
/// picture with no structure above its noise is too dark.
///
/// Each judgement has an entry bound and a farther exit bound (``Configuration/hysteresis``), so a picture at the
/// edge of one does not flip with every frame.
public struct FrameAnalyzer: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Pixels per block side.
        public var blockSize = 4
        /// How many frames back a frame is compared with: a slow movement adds up over them, sensor noise does not
        /// (at 5 frames a second, 2 is 0.4 s).
        public var lag = 2
        /// Least distance (0…255, scaled by the change of contrast) of a block from its expected level that counts.
        public var rawThreshold = 8.0
        /// A frame whose mean level moves more than this (0…255) is a change of light…
        public var lightingStep = 12.0
        /// …and is reported as a lighting change (no movement) when at least this fraction of blocks changed.
        public var lightingChangedFraction = 0.4
        /// Mean level (0…255) under which the area is too dark to judge when it also shows too little
        /// (``minimumSpread``); a dim picture with structure, e.g. an infrared one, is judged.
        public var darkLevel = 28.0
        /// Mean level under which the area is too dark whatever it shows.
        public var blackLevel = 8.0
        /// Mean level over which the area is too bright to judge.
        public var brightLevel = 235.0
        /// Spread (standard deviation of block levels, the sensor's noise taken out) under which nothing can be
        /// seen in the area: with a dark picture, too dark; else the area holds nothing to look at (an empty, plain
        /// sheet).
        public var minimumSpread = 3.0
        /// Fraction of blocks with an edge (a step of ``edgeLevel`` to a neighbour) under which the area is empty.
        public var emptyEdgeFraction = 0.01
        public var edgeLevel = 14.0
        /// The spread of a lit nursery's picture: at lower contrast the block and edge thresholds shrink with it.
        public var referenceSpread = 20.0
        /// A block's change, or an edge, counts only beyond this many standard deviations of the sensor's noise…
        public var noiseFactor = 3.0
        /// …and never below this many grey levels.
        public var minimumThreshold = 2.5
        /// How much farther than its entry bound a judgement's exit bound lies (a fraction of the bound).
        public var hysteresis = 0.25

        public init() {}
    }

    /// Whether the area can be judged, and why not.
    public enum Judgement: Sendable, Hashable {
        case judgeable
        case tooDark
        case tooBright
        /// Nothing in the sleep area (no edges, no texture).
        case empty
    }

    /// One frame's account.
    public struct Measurement: Sendable, Hashable {
        /// Mean level in the area, 0…255.
        public var meanLevel: Double
        /// Standard deviation of the block levels.
        public var spread: Double
        /// Fraction of the area's blocks that changed since the frame ``Configuration/lag`` before, light taken out (0 for the first
        /// frame and for a lighting change).
        public var changedFraction: Double
        /// Where it changed: the centres (fractions of the frame) of the changed blocks, one per cell of an
        /// 8×6 grid over the sleep area that holds any (so a test of *where* costs no more than 48 points).
        public var changedPlaces: [Place]
        /// The light changed by more than ``Configuration/lightingStep`` since that frame.
        public var lightChanged: Bool
        /// Fraction of blocks with an edge to a neighbour.
        public var edgeFraction: Double
        public var judgement: Judgement
        /// The sensor noise: standard deviation of a still block's level (0 before a second frame).
        public var noise: Double

        public init(
            meanLevel: Double, spread: Double, changedFraction: Double, changedPlaces: [Place] = [],
            lightChanged: Bool, edgeFraction: Double, judgement: Judgement, noise: Double = 0
        ) {
            self.noise = noise
            self.meanLevel = meanLevel
            self.spread = spread
            self.changedFraction = changedFraction
            self.changedPlaces = changedPlaces
            self.lightChanged = lightChanged
            self.edgeFraction = edgeFraction
            self.judgement = judgement
        }
    }

    /// A point as fractions of the frame.
    public struct Place: Sendable, Hashable {
        public var x: Double
        public var y: Double

        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The grid changed places are reported on.
    static let placeColumns = 8
    static let placeRows = 6

    public var configuration: Configuration
    private typealias Levels = (
        blocks: [Double], sorted: [Double], mean: Double, spread: Double, columns: Int, rows: Int
    )
    /// The last ``Configuration/lag`` frames' levels, oldest first.
    private var history: [Levels] = []
    private var lastJudgement: Judgement?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets the frames before (after a gap, a new sleep area or a new camera).
    public mutating func reset() {
        history = []
        lastJudgement = nil
    }

    /// Measures `frame` inside `area` against the frame ``Configuration/lag`` before it.
    public mutating func analyze(_ frame: GrayFrame, area: SleepArea) -> Measurement {
        let (blocks, columns, rows) = Self.blockLevels(frame, area: area, blockSize: configuration.blockSize)
        let count = Double(blocks.count)
        let mean = blocks.reduce(0, +) / count
        let rawSpread = (blocks.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / count).squareRoot()
        let sorted = blocks.sorted()
        // The frames compared with: the one just before, and the one `lag` before (a slow movement adds up over
        // it, while a flicker at the frame rate shows only against the one before).
        let earlier = [history.last, history.count > 1 ? history.first : nil].compactMap { $0 }
            .filter { $0.columns == columns && $0.rows == rows }
        let distances = earlier.map { before in
            blocks.indices.map { abs(blocks[$0] - Self.carried(before.blocks[$0], from: before.sorted, to: sorted)) }
        }
        // Most blocks are still: the typical distance to the frame before is the noise of two frames,
        // |N(0, σ√2)|, whose median is 0.674 σ√2: a block's own noise σ ≈ 1.05 × the median.
        let noise = distances.first.map { 1.05 * Self.median($0) } ?? 0
        // The picture's structure without its noise.
        let spread = (max(0, rawSpread * rawSpread - noise * noise)).squareRoot()
        let scale = min(1, spread / configuration.referenceSpread)
        // Two noisy blocks differ by σ√2.
        let floor = 1.41 * max(configuration.minimumThreshold, configuration.noiseFactor * noise)
        let edges = Self.edgeFraction(
            blocks, columns: columns, rows: rows, level: max(configuration.edgeLevel * scale, floor))

        var lightChanged = false
        var changed = 0.0
        var cells = Set<Int>()
        for (before, distances) in zip(earlier, distances) {
            lightChanged = lightChanged || abs(mean - before.mean) > configuration.lightingStep
            let contrast = min(3, max(1, spread / max(before.spread, configuration.minimumSpread)))
            let threshold = max(configuration.rawThreshold * scale, floor) * contrast
            let moved = blocks.indices.filter { distances[$0] > threshold }
            guard Double(moved.count) / count > changed else { continue }
            changed = Double(moved.count) / count
            cells = Set(
                moved.map { index in
                    (index / columns) * Self.placeRows / rows * Self.placeColumns
                        + (index % columns) * Self.placeColumns / columns
                })
        }
        if lightChanged, changed >= configuration.lightingChangedFraction {
            changed = 0
            cells = []
        }
        let places = cells.sorted().map { cell in
            Place(
                x: area.x + area.width * (Double(cell % Self.placeColumns) + 0.5) / Double(Self.placeColumns),
                y: area.y + area.height * (Double(cell / Self.placeColumns) + 0.5) / Double(Self.placeRows))
        }
        history.append((blocks, sorted, mean, spread, columns, rows))
        if history.count > max(1, configuration.lag) { history.removeFirst() }
        let judgement = judge(mean: mean, spread: spread, edges: edges)
        lastJudgement = judgement
        return Measurement(
            meanLevel: mean, spread: spread, changedFraction: changed, changedPlaces: places,
            lightChanged: lightChanged, edgeFraction: edges, judgement: judgement, noise: noise)
    }

    /// The judgement of a picture, each bound pushed out by ``Configuration/hysteresis`` while the last frame was
    /// judged on its far side (a picture must be clearly lit, clearly not dazzling, clearly holding something to
    /// leave those judgements).
    private func judge(mean: Double, spread: Double, edges: Double) -> Judgement {
        let c = configuration
        func bound(_ value: Double, leaving held: Judgement, _ direction: Double) -> Double {
            lastJudgement == held ? value * (1 + direction * c.hysteresis) : value
        }
        if mean < bound(c.blackLevel, leaving: .tooDark, 1)
            || (mean < bound(c.darkLevel, leaving: .tooDark, 1)
                && spread < bound(c.minimumSpread, leaving: .tooDark, 1))
        {
            return .tooDark
        }
        if mean > bound(c.brightLevel, leaving: .tooBright, -0.1) { return .tooBright }
        if spread < bound(c.minimumSpread, leaving: .empty, 1) || edges < bound(c.emptyEdgeFraction, leaving: .empty, 1)
        {
            return .empty
        }
        return .judgeable
    }

    private static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// Where `level`, a level of the previous frame, is expected now: the level at the same quantile of the current
    /// frame's levels (ties share the middle of their run).
    static func carried(_ level: Double, from before: [Double], to now: [Double]) -> Double {
        let below = partition(before) { $0 < level }
        let upTo = partition(before) { $0 <= level }
        let quantile = (Double(below) + Double(max(below, upTo - 1))) / 2 / Double(max(1, before.count - 1))
        let position = quantile * Double(now.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(now.count - 1, lower + 1)
        let weight = position - Double(lower)
        return now[lower] * (1 - weight) + now[upper] * weight
    }

    /// How many leading elements of the sorted `values` satisfy `predicate` (true, then false).
    private static func partition(_ values: [Double], _ predicate: (Double) -> Bool) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if predicate(values[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Mean level of each block of the area, row after row (a partial last block is averaged over what it has).
    static func blockLevels(_ frame: GrayFrame, area: SleepArea, blockSize: Int) -> ([Double], Int, Int) {
        let box = area.pixels(frameWidth: frame.width, frameHeight: frame.height)
        let size = max(1, blockSize)
        let columns = max(1, (box.right - box.left + size - 1) / size)
        let rows = max(1, (box.bottom - box.top + size - 1) / size)
        var sums = [Int](repeating: 0, count: columns * rows)
        var counts = [Int](repeating: 0, count: columns * rows)
        let pixels = frame.pixels
        for y in box.top..<box.bottom {
            let row = (y - box.top) / size * columns
            let base = y * frame.width
            for x in box.left..<box.right {
                let block = row + (x - box.left) / size
                sums[block] += Int(pixels[base + x])
                counts[block] += 1
            }
        }
        return (zip(sums, counts).map { Double($0) / Double(max(1, $1)) }, columns, rows)
    }

    /// Fraction of blocks that differ from the block to the right or below by more than `level`.
    static func edgeFraction(_ blocks: [Double], columns: Int, rows: Int, level: Double) -> Double {
        var edges = 0
        for row in 0..<rows {
            for column in 0..<columns {
                let here = blocks[row * columns + column]
                let right = column + 1 < columns ? blocks[row * columns + column + 1] : here
                let below = row + 1 < rows ? blocks[(row + 1) * columns + column] : here
                if abs(here - right) > level || abs(here - below) > level { edges += 1 }
            }
        }
        return Double(edges) / Double(blocks.count)
    }
}
