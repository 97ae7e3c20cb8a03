/// One low-rate grey picture from the camera (8 bits a pixel, row after row), as the detectors see it: typically
/// 160×120 at 5 frames a second.
public struct GrayFrame: Sendable, Hashable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    /// - Precondition: `pixels.count == width * height`, both sides at least 1.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height, "a frame is width × height pixels")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A frame filled with one grey level.
    public init(width: Int, height: Int, level: UInt8) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: level, count: width * height))
    }

    public subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }
}
