/// The part of the camera's picture where the baby sleeps, as fractions of the frame (0…1 from the top left), so it
/// survives a change of resolution. Every detector looks only inside it; movement outside (a curtain, a pet, the
/// door) is never counted.
///
/// Written and read as `x,y,w,h`, e.g. `cribcall settings set sleepArea=0.2,0.1,0.6,0.8`.
public struct SleepArea: Sendable, Hashable, CustomStringConvertible {
    public let x: Double
    public let y: Double
    public let width: Double
    public let height: Double

    /// The whole frame (the default until a parent draws the sleep area).
    public static let wholeFrame = SleepArea(unchecked: 0, 0, 1, 1)

    /// The smallest side, as a fraction of the frame: a smaller area holds too few pixels to judge.
    public static let minimumSide = 0.05

    /// - Throws: ``SleepAreaError`` when a value is not a number within the frame or a side is under 5 %.
    public init(x: Double, y: Double, width: Double, height: Double) throws(SleepAreaError) {
        guard [x, y, width, height].allSatisfy(\.isFinite), x >= 0, y >= 0 else {
            throw SleepAreaError(
                "the sleep area's x and y must be fractions of the frame between 0 and 1, e.g. 0.2,0.1,0.6,0.8")
        }
        guard width >= Self.minimumSide, height >= Self.minimumSide else {
            throw SleepAreaError(
                "the sleep area must be at least 5 % of the frame wide and high (e.g. 0.2,0.1,0.6,0.8)")
        }
        // A little slack for values written with four decimals.
        guard x + width <= 1.0001, y + height <= 1.0001 else {
            throw SleepAreaError(
                "the sleep area must lie inside the frame (x + w and y + h at most 1), e.g. 0.2,0.1,0.6,0.8")
        }
        self.init(unchecked: x, y, min(width, 1 - x), min(height, 1 - y))
    }

    /// Reads `x,y,w,h` (four decimal fractions, spaces allowed).
    /// - Throws: ``SleepAreaError`` saying what to write instead.
    public init(parsing text: String) throws(SleepAreaError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmedSpaces)
        }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let width = parts[2], let height = parts[3],
            text.utf8.count <= 100
        else {
            throw SleepAreaError(
                "the sleep area is four fractions x,y,w,h of the frame, e.g. 0.2,0.1,0.6,0.8 (got \"\(text.prefix(40))\")"
            )
        }
        try self.init(x: x, y: y, width: width, height: height)
    }

    private init(unchecked x: Double, _ y: Double, _ width: Double, _ height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// `x,y,w,h` with at most four decimals; reads back as the same area.
    public var description: String {
        [x, y, width, height].map(Self.decimal).joined(separator: ",")
    }

    /// The pixels it covers in a `frameWidth`×`frameHeight` frame: columns `left..<right`, rows `top..<bottom`,
    /// never empty.
    public func pixels(frameWidth: Int, frameHeight: Int) -> (left: Int, top: Int, right: Int, bottom: Int) {
        let left = min(frameWidth - 1, max(0, Int((x * Double(frameWidth)).rounded(.down))))
        let top = min(frameHeight - 1, max(0, Int((y * Double(frameHeight)).rounded(.down))))
        let right = max(left + 1, min(frameWidth, Int(((x + width) * Double(frameWidth)).rounded(.up))))
        let bottom = max(top + 1, min(frameHeight, Int(((y + height) * Double(frameHeight)).rounded(.up))))
        return (left, top, right, bottom)
    }

    /// Whether a point given as fractions of the frame lies inside.
    public func contains(x pointX: Double, y pointY: Double) -> Bool {
        pointX >= x && pointX <= x + width && pointY >= y && pointY <= y + height
    }

    private static func decimal(_ value: Double) -> String {
        let scaled = Int((value * 10_000).rounded())
        let whole = scaled / 10_000
        var fraction = String(scaled % 10_000)
        while fraction.count < 4 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)"
    }
}

/// A sleep area that cannot be used; the message says what to write.
public struct SleepAreaError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

extension Substring {
    /// Without leading and trailing spaces.
    fileprivate var trimmedSpaces: Substring {
        let start = firstIndex { $0 != " " } ?? endIndex
        let end = lastIndex { $0 != " " }.map(index(after:)) ?? start
        return self[start..<Swift.max(start, end)]
    }
}
