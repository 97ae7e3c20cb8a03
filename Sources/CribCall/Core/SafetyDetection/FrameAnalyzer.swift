/// What one frame shows inside the sleep area: its light, whether it can be judged, and how much of it changed
/// since the previous frame once a change of light is taken out.
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
public struct FrameAnalyzer: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Pixels per block side.
        public var blockSize = 4
        /// Least distance (0…255, scaled by the change of contrast) of a block from its expected level that counts.
        public var rawThreshold = 8.0
        /// A frame whose mean level moves more than this (0…255) is a change of light…
        public var lightingStep = 12.0
        /// …and is reported as a lighting change (no movement) when at least this fraction of blocks changed.
        public var lightingChangedFraction = 0.4
        /// Mean level (0…255) under which the area is too dark to judge.
        public var darkLevel = 28.0
        /// Mean level over which the area is too bright to judge.
        public var brightLevel = 235.0
        /// Spread (standard deviation of block levels) under which nothing can be seen in the area: with a dark
        /// picture, too dark; else the area holds nothing to look at (an empty, plain sheet).
        public var minimumSpread = 3.0
        /// Fraction of blocks with an edge (a step of ``edgeLevel`` to a neighbour) under which the area is empty.
        public var emptyEdgeFraction = 0.01
        public var edgeLevel = 14.0

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
        /// Fraction of the area's blocks that changed since the previous frame, light taken out (0 for the first
        /// frame and for a lighting change).
        public var changedFraction: Double
        /// Where it changed: the centres (fractions of the frame) of the changed blocks, one per cell of an
        /// 8×6 grid over the sleep area that holds any (so a test of *where* costs no more than 48 points).
        public var changedPlaces: [Place]
        /// The light changed by more than ``Configuration/lightingStep`` since the previous frame.
        public var lightChanged: Bool
        /// Fraction of blocks with an edge to a neighbour.
        public var edgeFraction: Double
        public var judgement: Judgement

        public init(
            meanLevel: Double, spread: Double, changedFraction: Double, changedPlaces: [Place] = [],
            lightChanged: Bool, edgeFraction: Double, judgement: Judgement
        ) {
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
    private var previous: (blocks: [Double], sorted: [Double], mean: Double, spread: Double, columns: Int, rows: Int)?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets the previous frame (after a gap, a new sleep area or a new camera).
    public mutating func reset() {
        previous = nil
    }

    /// Measures `frame` inside `area` against the previous frame given.
    public mutating func analyze(_ frame: GrayFrame, area: SleepArea) -> Measurement {
        let (blocks, columns, rows) = Self.blockLevels(frame, area: area, blockSize: configuration.blockSize)
        let count = Double(blocks.count)
        let mean = blocks.reduce(0, +) / count
        let spread = (blocks.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / count).squareRoot()
        let edges = Self.edgeFraction(blocks, columns: columns, rows: rows, level: configuration.edgeLevel)

        var changed = 0.0
        var places: [Place] = []
        var lightChanged = false
        let sorted = blocks.sorted()
        if let previous, previous.columns == columns, previous.rows == rows {
            lightChanged = abs(mean - previous.mean) > configuration.lightingStep
            let contrast = min(3, max(1, spread / max(previous.spread, configuration.minimumSpread)))
            let threshold = configuration.rawThreshold * contrast
            var count = 0
            var cells = Set<Int>()
            for index in blocks.indices {
                let expected = Self.carried(previous.blocks[index], from: previous.sorted, to: sorted)
                if abs(blocks[index] - expected) > threshold {
                    count += 1
                    let column = (index % columns) * Self.placeColumns / columns
                    let row = (index / columns) * Self.placeRows / rows
                    cells.insert(row * Self.placeColumns + column)
                }
            }
            changed = Double(count) / Double(blocks.count)
            if lightChanged, changed >= configuration.lightingChangedFraction {
                changed = 0
                cells = []
            }
            places = cells.sorted().map { cell in
                Place(
                    x: area.x + area.width * (Double(cell % Self.placeColumns) + 0.5) / Double(Self.placeColumns),
                    y: area.y + area.height * (Double(cell / Self.placeColumns) + 0.5) / Double(Self.placeRows))
            }
        }
        previous = (blocks, sorted, mean, spread, columns, rows)

        let judgement: Judgement
        if mean < configuration.darkLevel {
            judgement = .tooDark
        } else if mean > configuration.brightLevel {
            judgement = .tooBright
        } else if spread < configuration.minimumSpread || edges < configuration.emptyEdgeFraction {
            judgement = .empty
        } else {
            judgement = .judgeable
        }
        return Measurement(
            meanLevel: mean, spread: spread, changedFraction: changed, changedPlaces: places,
            lightChanged: lightChanged,
            edgeFraction: edges, judgement: judgement)
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
