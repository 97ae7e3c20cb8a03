/// The modules of a QR code: `true` is dark.
public struct QRMatrix: Sendable, Hashable {
    /// Modules per side.
    public let size: Int
    private let modules: [Bool]

    init(size: Int, modules: [Bool]) {
        precondition(modules.count == size * size, "a QR matrix is square")
        self.size = size
        self.modules = modules
    }

    /// Whether the module at column `x`, row `y` is dark; outside the symbol (the quiet zone) is light.
    public subscript(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// Text for a terminal: each character covers two rows with half blocks, light modules drawn as blocks so the
    /// code scans on the usual light-on-dark terminal. `quietZone` light modules surround the symbol.
    public func terminalText(quietZone: Int = 2) -> String {
        var lines: [String] = []
        let range = -quietZone..<(size + quietZone)
        for y in stride(from: -quietZone, to: size + quietZone, by: 2) {
            var line = ""
            for x in range {
                let top = !self[x, y]
                let bottom = !self[x, y + 1] || y + 1 >= size + quietZone
                line += top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// An 8-bit grayscale PNG of the code: `scale` pixels per module, `quietZone` light modules around it.
    public func png(scale: Int = 8, quietZone: Int = 4) -> [UInt8] {
        let side = (size + 2 * quietZone) * scale
        var raw: [UInt8] = []
        raw.reserveCapacity(side * (side + 1))
        for row in 0..<side {
            raw.append(0)  // filter: none
            let y = row / scale - quietZone
            for column in 0..<side {
                raw.append(self[column / scale - quietZone, y] ? 0 : 255)
            }
        }
        return PNGWriter.grayscale(width: side, height: side, scanlines: raw)
    }

    /// The code as an SVG picture sized by its container: black modules on white, `quietZone` light modules
    /// around; `title` is its accessible name.
    public func svg(title: String, quietZone quiet: Int = 4) -> String {
        let side = size + 2 * quiet
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                var run = 1
                while x + run < size, self[x + run, y] { run += 1 }
                path += "M\(x + quiet) \(y + quiet)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges" \
            role="img" aria-label="\(Self.xmlEscaped(title))"><rect width="\(side)" height="\(side)" fill="#fff"/>\
            <path d="\(path)" fill="#000"/></svg>
            """
    }

    /// Text safe inside an XML attribute.
    static func xmlEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
