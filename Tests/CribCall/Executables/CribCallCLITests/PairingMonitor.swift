import CanonicalJSON
import Foundation
import TestSupport
import Testing

/// A `cribcall monitor` showing a pairing QR code (`--port 0 --json --no-discovery --audio-source test:silence`),
/// started from a test, and a listener's data directory to pair with it.
struct PairingMonitor {
    let process: BackgroundProcess
    /// The UDP port it serves on.
    let port: Int
    /// The QR code's text (what `cribcall pair --qr` takes).
    let qrText: String

    static func cribcall(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), arguments)
    }

    /// Starts the monitor with the monitor data directory `data` and `arguments` (e.g. `--qr-png FILE`, `--name`),
    /// and waits for its `ready` and `qr` lines.
    static func start(data: URL, _ arguments: [String]) async throws -> PairingMonitor {
        let process = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--port", "0", "--json", "--no-discovery", "--audio-source", "test:silence", "--qr",
                "--data-dir", data.path,
            ] + arguments)
        let ready = try await process.ready("cribcall monitor") { $0.contains(#""event":"ready""#) }
        let port = try #require(try JSONParser().parse(Array(ready.utf8))["port"]?.numberValue?.intValue)
        let qr = try #require(
            await process.line { $0.contains(#""event":"qr""#) }, "the QR code: \(process.errorOutput)")
        let text = try #require(try JSONParser().parse(Array(qr.utf8))["text"]?.stringValue)
        return PairingMonitor(process: process, port: port, qrText: text)
    }

    /// Pairs the listener whose data directory is `listener` by the QR code, over loopback.
    func pair(listener: URL) async throws -> Subprocess.Result {
        try await Self.cribcall([
            "pair", "--qr", qrText, "--address", "127.0.0.1:\(port)", "--name", "Dad's laptop", "--data-dir",
            listener.path,
        ])
    }
}
