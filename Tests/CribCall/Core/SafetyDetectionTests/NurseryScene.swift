import SafetyDetection

/// A generated nursery as the camera sees it, for the frame tests: a mattress with a quilted pattern, a baby (a
/// bright ellipse), a curtain at the left edge that can sway, the room's light (gain and offset) and sensor noise.
/// Deterministic: the same scene and frame number give the same pixels.
struct NurseryScene {
    var width = 160
    var height = 120
    /// The baby's centre and radii, in pixels; nil: the cot is empty.
    var baby: (x: Double, y: Double, rx: Double, ry: Double)? = (80, 60, 18, 12)
    /// The curtain's edge (pixels from the left): it covers columns 0..<curtain.
    var curtain = 14.0
    /// The room's light: every pixel becomes gain × level + offset.
    var gain = 1.0
    var offset = 0.0
    /// Sensor noise amplitude (± grey levels).
    var noise = 3
    /// A plain mattress (no pattern), for the "nothing in the sleep area" case.
    var plain = false

    func frame(_ number: Int) -> GrayFrame {
        var random = number &* 2_654_435_761 &+ 12_345
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var level: Double
                if Double(x) < curtain {
                    level = 70 + Double((y / 6) % 2) * 25  // curtain folds
                } else if plain {
                    level = 120
                } else {
                    level = ((x / 10) + (y / 10)) % 2 == 0 ? 110 : 135  // quilted mattress
                }
                if let baby {
                    let dx = (Double(x) - baby.x) / baby.rx
                    let dy = (Double(y) - baby.y) / baby.ry
                    if dx * dx + dy * dy <= 1 { level = 205 - 20 * (dx * dx) }
                }
                random = random &* 1_103_515_245 &+ 12_345
                let jitter = noise == 0 ? 0 : Int((random >> 16) & 0x7FFF) % (2 * noise + 1) - noise
                let lit = gain * level + offset + Double(jitter)
                pixels[y * width + x] = UInt8(min(255, max(0, lit.rounded())))
            }
        }
        return GrayFrame(width: width, height: height, pixels: pixels)
    }
}
