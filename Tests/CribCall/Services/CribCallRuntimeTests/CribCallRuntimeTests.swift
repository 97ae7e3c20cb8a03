import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import CribCallRuntime

/// What a program that is a CribCall device (`cribcall`, the Argus hub) uses without command-line text: requests
/// that cannot work are refused with ``CribCallRuntimeError/Code/invalidRequest`` before anything is sent or
/// stored, and paired devices are found by what a person types.
@Suite("CribCall's runtime: pairing requests, listings, lookups")
struct CribCallRuntimeTests {
    @Test(
        "addresses split into host and port, IPv6 in brackets",
        arguments: [
            ("monitor.local:48080", "monitor.local", 48080),
            ("[fe80::1]:4000", "fe80::1", 4000),
            ("[::1]", "::1", nil),
            ("192.0.2.7", "192.0.2.7", nil),
        ] as [(String, String, Int?)])
    func split(text: String, host: String, port: Int?) throws {
        let parsed = try MonitorPairing.split(text, requirePort: false)
        #expect(parsed.host == host && parsed.port == port)
    }

    @Test("an address without a port is refused when one is needed, with the form to use")
    func splitNeedsPort() throws {
        #expect(throws: CribCallRuntimeError(.invalidRequest, "address '[::1]' needs a port: [ADDR]:PORT")) {
            try MonitorPairing.split("[::1]", requirePort: true)
        }
        #expect(throws: CribCallRuntimeError(.invalidRequest, "address 'nursery' needs a port: HOST:PORT")) {
            try MonitorPairing.split("nursery", requirePort: true)
        }
        #expect(try MonitorPairing.split("", requirePort: true) == (nil, nil))
    }

    @Test("names are printed with control characters escaped, so a peer's name cannot drive the terminal")
    func printable() {
        #expect(TextTable.printable("baby\u{1B}[2J room") == "baby\\u{1b}[2J room")
        #expect(TextTable.printable("Kinderzimmer ☾") == "Kinderzimmer ☾")
    }

    @Test("tables pad every column but the last to its widest cell")
    func table() {
        #expect(
            TextTable.render([["ID", "NAME"], ["abcdef", "x"], ["a", "longer"]])
                == "ID      NAME\nabcdef  x\na       longer")
    }

    @Test(
        "a pairing request that cannot work is refused before any connection, saying what to give",
        arguments: [
            ("neither", "choose --pin or --qr"),
            ("short PIN", "--pin-code is the 6 digits the monitor shows (got '12a')"),
            ("no address", "--pin needs --monitor ID|NAME (discovery) or --address HOST:PORT"),
            ("no port", "address 'nursery' needs a port: HOST:PORT"),
            ("no fingerprint", "--pin needs --fingerprint: the 64 hex characters the monitor prints"),
        ])
    func refusedPairing(case name: String, message: String) async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-runtime")
        defer { try? FileManager.default.removeItem(at: directory) }
        var pairing = MonitorPairing(name: "test")
        switch name {
        case "neither": break
        case "short PIN": (pairing.pin, pairing.pinCode) = (true, "12a")
        case "no address": pairing.pin = true
        case "no port": (pairing.pin, pairing.address) = (true, "nursery")
        default: (pairing.pin, pairing.address) = (true, "192.0.2.1:48080")
        }
        let asked = Counter()
        let data = CribCallDataDirectory(path: directory.appendingPathComponent("data").path)
        await #expect(throws: CribCallRuntimeError(.invalidRequest, message)) {
            try await pairing.pair(in: data) { _ in
                asked.increment()
                return nil
            }
        }
        #expect(asked.value == 0, "no PIN is asked for a request that cannot work")
        #expect(!FileManager.default.fileExists(atPath: data.url.path), "nothing is created for it")
    }

    @Test("a monitor is named by id, name or a unique id prefix; an unknown or shared one says what to do")
    func resolveMonitor() throws {
        func monitor(_ id: String, _ name: String) -> TrustedMonitorRecord {
            TrustedMonitorRecord(
                monitorId: id, name: name,
                fingerprint: CertificateFingerprint(hex: String(repeating: "ab", count: 32))!,
                lastKnownHost: nil, lastKnownPort: nil, lastSeq: 0, createdAt: Date(timeIntervalSince1970: 0))
        }
        let monitors = [monitor("cafe1111", "Nursery"), monitor("cafe2222", "Nursery"), monitor("beef0000", "Den")]
        #expect(try PairedMonitors.resolve("Den", among: monitors, listing: "list").monitorId == "beef0000")
        #expect(try PairedMonitors.resolve("cafe2", among: monitors, listing: "list").monitorId == "cafe2222")
        let shared = #expect(throws: CribCallRuntimeError.self) {
            try PairedMonitors.resolve("Nursery", among: monitors, listing: "list")
        }
        #expect(shared?.code == .ambiguous && shared?.message.contains("matches 2 monitors") == true)
        #expect(throws: CribCallRuntimeError(.unknownDevice, "no paired monitor has id or name x\\u{1b}; see `list`")) {
            try PairedMonitors.resolve("x\u{1B}", among: monitors, listing: "list")
        }
    }
}

/// Counts calls from any thread.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
