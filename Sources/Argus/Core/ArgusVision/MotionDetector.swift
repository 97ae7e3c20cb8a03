/// Motion in a camera's picture by frame differencing on small grey frames: the pixels whose brightness changed
/// by more than ``threshold`` (after taking out a change of the whole picture's light), enough of them to matter,
/// at most one event per ``cooldown``. Pure: frames and their times come in, events go out.
public struct MotionDetector: Sendable {
    /// Brightness change (0–255) for a pixel to count as changed.
    public var threshold: Int
    /// Share of the picture that must change for motion (0.005: half a percent).
    public var minimumFraction: Double
    /// Seconds after an event before the next one.
    public var cooldown: Double

    private var previous: [UInt8] = []
    private var previousSize = (width: 0, height: 0)
    private var lastEvent: Double?

    public init(threshold: Int = 24, minimumFraction: Double = 0.005, cooldown: Double = 30) {
        self.threshold = threshold
        self.minimumFraction = minimumFraction
        self.cooldown = cooldown
    }

    /// What motion there was between the last frame and `gray` (`width × height` bytes) seen at `time` (seconds on
    /// any clock that only goes forward); nil when none, or during the cooldown.
    public mutating func feed(gray: [UInt8], width: Int, height: Int, time: Double) -> Motion? {
        guard width > 0, height > 0, gray.count >= width * height else { return nil }
        defer {
            previous = gray
            previousSize = (width, height)
        }
        guard previousSize == (width, height), previous.count == gray.count else { return nil }
        let motion = Self.compare(previous, gray, width: width, height: height, threshold: threshold)
        guard motion.fraction >= minimumFraction else { return nil }
        if let lastEvent, time - lastEvent < cooldown { return nil }
        lastEvent = time
        return motion
    }

    /// The changed share and where the change is, between two frames of one size.
    static func compare(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int, threshold: Int) -> Motion {
        let count = width * height
        var shift = 0
        for index in 0..<count { shift += Int(b[index]) - Int(a[index]) }
        shift /= count  // the whole picture brighter or darker (a light switched on): not motion
        var changed = 0
        var sumX = 0
        var sumY = 0
        for y in 0..<height {
            let row = y * width
            for x in 0..<width where abs(Int(b[row + x]) - Int(a[row + x]) - shift) > threshold {
                changed += 1
                sumX += x
                sumY += y
            }
        }
        guard changed > 0 else { return Motion(fraction: 0, x: 0.5, y: 0.5) }
        return Motion(
            fraction: Double(changed) / Double(count), x: (Double(sumX) / Double(changed) + 0.5) / Double(width),
            y: (Double(sumY) / Double(changed) + 0.5) / Double(height))
    }
}

/// Motion in a picture: how much of it changed and where (the middle of the change, 0–1 from the top left).
public struct Motion: Sendable, Hashable {
    public var fraction: Double
    public var x: Double
    public var y: Double

    public init(fraction: Double, x: Double, y: Double) {
        self.fraction = fraction
        self.x = x
        self.y = y
    }

    /// Where it was, in words: "Motion near the left edge", "Motion at the top right", "Motion in the middle".
    public var description: String {
        let column = x < 1.0 / 3 ? "left" : x > 2.0 / 3 ? "right" : nil
        let row = y < 1.0 / 3 ? "top" : y > 2.0 / 3 ? "bottom" : nil
        switch (row, column) {
        case (nil, nil): return "Motion in the middle of the picture"
        case (nil, let column?): return "Motion near the \(column) edge"
        case (let row?, nil): return "Motion near the \(row) edge"
        case (let row?, let column?): return "Motion at the \(row) \(column)"
        }
    }

    /// How sure (for `confidence_score`): the changed share, scaled so that a tenth of the picture is certain.
    public var confidence: Double { min(1, (fraction * 10 * 100).rounded() / 100) }
}
