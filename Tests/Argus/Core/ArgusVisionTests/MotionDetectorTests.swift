import ArgusVision
import Testing

@Suite("Motion by frame differencing")
struct MotionDetectorTests {
    static let width = 160
    static let height = 120

    /// A grey picture of `brightness` with a white square of `side` at (`x`, `y`).
    static func frame(brightness: UInt8 = 100, square: (x: Int, y: Int)? = nil, side: Int = 20) -> [UInt8] {
        var pixels = [UInt8](repeating: brightness, count: width * height)
        if let square {
            for y in square.y..<min(height, square.y + side) {
                for x in square.x..<min(width, square.x + side) { pixels[y * width + x] = 250 }
            }
        }
        return pixels
    }

    @Test("a square that moves is motion, found where it moved; a still picture is not")
    func moving() {
        var detector = MotionDetector(cooldown: 30)
        #expect(
            detector.feed(gray: Self.frame(square: (5, 50)), width: Self.width, height: Self.height, time: 0) == nil)
        #expect(
            detector.feed(gray: Self.frame(square: (5, 50)), width: Self.width, height: Self.height, time: 0.2) == nil)
        let motion = detector.feed(
            gray: Self.frame(square: (12, 50)), width: Self.width, height: Self.height, time: 0.4)
        #expect(motion?.description == "Motion near the left edge", "\(String(describing: motion))")
        #expect((motion?.fraction ?? 0) > 0.005)
        // within the cooldown, nothing; after it, the next one
        #expect(
            detector.feed(gray: Self.frame(square: (40, 50)), width: Self.width, height: Self.height, time: 10) == nil)
        #expect(
            detector.feed(gray: Self.frame(square: (130, 2)), width: Self.width, height: Self.height, time: 20) == nil)
        let later = detector.feed(
            gray: Self.frame(square: (137, 2)), width: Self.width, height: Self.height, time: 31)
        #expect(later?.description == "Motion at the top right", "\(String(describing: later))")
    }

    @Test("the light of the whole room changing is not motion; noise under the threshold is not either")
    func light() {
        var detector = MotionDetector(cooldown: 0)
        _ = detector.feed(gray: Self.frame(brightness: 60), width: Self.width, height: Self.height, time: 0)
        #expect(
            detector.feed(gray: Self.frame(brightness: 140), width: Self.width, height: Self.height, time: 1) == nil)
        var noisy = Self.frame(brightness: 140)
        for index in stride(from: 0, to: noisy.count, by: 3) { noisy[index] &+= 10 }
        #expect(detector.feed(gray: noisy, width: Self.width, height: Self.height, time: 2) == nil)
        #expect(detector.feed(gray: [1, 2], width: Self.width, height: Self.height, time: 3) == nil, "short frame")
    }

    @Test(
        "descriptions for every part of the picture",
        arguments: [
            (0.5, 0.5, "Motion in the middle of the picture"), (0.9, 0.5, "Motion near the right edge"),
            (0.5, 0.1, "Motion near the top edge"), (0.5, 0.9, "Motion near the bottom edge"),
            (0.1, 0.9, "Motion at the bottom left"),
        ])
    func words(x: Double, y: Double, expected: String) {
        #expect(Motion(fraction: 0.02, x: x, y: y).description == expected)
        #expect(Motion(fraction: 0.02, x: x, y: y).confidence == 0.2)
    }
}
