import Foundation
import QRCode
import TestSupport
import Testing

@Suite("QR codes: libqrencode matrix, terminal text, PNG read back by zbarimg")
struct QRCodeTests {
    static let payload =
        #"{"monitorCertFingerprint":"9e3ddbe404de4780bfb9ba89015dac49a33875f9065fb5264e111da85e43163e","monitorId":"5d24d511-413f-49b4-9c10-497df3c8af53","monitorName":"Nursery ☾","pairingToken":"q8Zk1X0b2yM3nRk9pQ7wVg","service":{"defaultPort":48080,"protocol":"baby-monitor","version":1},"type":"monitor_pair_v1"}"#

    @Test("the PNG decodes back to exactly the pairing payload (zbarimg, an independent decoder)")
    func pngDecodes() async throws {
        let matrix = try QRCodeEncoder.encode(Self.payload)
        let directory = try Subprocess.temporaryDirectory("qr")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pair.png")
        try Data(matrix.png()).write(to: file)
        let decoded = try await Subprocess.run("zbarimg", ["--raw", "-q", "-Sbinary", file.path])
        #expect(decoded.status == 0, "zbarimg: \(decoded.stderrText)")
        #expect(decoded.stdout.starts(with: Array(Self.payload.utf8)))
    }

    @Test("the terminal rendering is a rectangle of half blocks with a light quiet zone")
    func terminalText() throws {
        let matrix = try QRCodeEncoder.encode("hello")
        let lines = matrix.terminalText(quietZone: 2).split(separator: "\n")
        #expect(lines.count == (matrix.size + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == matrix.size + 4 })
        #expect(lines.first?.allSatisfy { $0 == "█" } == true, "the top quiet zone is light")
        #expect(Set(lines.joined()).isSubset(of: ["█", "▀", "▄", " "]))
    }

    @Test("text too long for a QR code is refused with a clear error")
    func tooLong() {
        let error = #expect(throws: QRCodeEncoder.Failure.self) {
            try QRCodeEncoder.encode(String(repeating: "x", count: 8000))
        }
        #expect(error?.description.contains("does not fit") == true)
    }

    @Test("the SVG draws every dark module once, inside the quiet zone, with an escaped accessible name")
    func svg() throws {
        let matrix = try QRCodeEncoder.encode("cribcall pairing")
        let svg = matrix.svg(title: "Pair <\"A&B\">")
        let side = matrix.size + 8
        #expect(svg.hasPrefix("<svg") && svg.contains("viewBox=\"0 0 \(side) \(side)\""))
        #expect(svg.contains("aria-label=\"Pair &lt;&quot;A&amp;B&quot;&gt;\""))
        // Each run "M x yhNv1h-Nz" covers N dark modules of one row.
        var dark = 0
        for run in svg.split(separator: "M").dropFirst() {
            let parts = run.split(separator: "h")
            dark += Int(parts[1].split(separator: "v")[0])!
        }
        let expected = (0..<matrix.size).reduce(0) { total, y in
            total + (0..<matrix.size).filter { matrix[$0, y] }.count
        }
        #expect(dark == expected)
    }
}
