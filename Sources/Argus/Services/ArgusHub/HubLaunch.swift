import ArgusAuth
import ArgusCribCall
public import ArgusPush
import ArgusStore
import CribCallRuntime
import DeviceIdentityStore
public import Foundation
import Hummingbird
import Logging
import QRCode
import ServiceDiscovery

/// Every `argus-hub` command as a function: the executable only parses arguments and calls these.
public enum HubLaunch {
    /// `--data-dir`, or `$XDG_DATA_HOME/argus` (`~/.local/share/argus`).
    public static func dataDirectory(_ option: String?) -> URL {
        option.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DataDirectory.defaultURL(product: "argus")
    }

    /// Serves until SIGINT or SIGTERM, printing the ready line (JSON or words) once it listens.
    public static func serve(_ configuration: HubConfiguration, json: Bool) async throws {
        var configuration = configuration
        let host = configuration.host
        let path = configuration.dataDirectory.path
        let scheme = configuration.plainHTTP ? "http" : "https"
        configuration.onReady = { port, fingerprint in
            let hubs = reachableHosts(listening: host).map { "\(scheme)://\(bracketed($0)):\(port)" }
            if json {
                let object: [String: Any] = [
                    "event": "ready", "port": port, "scheme": scheme, "certFingerprint": fingerprint,
                    "version": ArgusVersion.current, "hubs": hubs,
                ]
                let data = try? JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                say(String(decoding: data ?? Data(), as: UTF8.self))
            } else {
                say("argus-hub \(ArgusVersion.current) serves the mobile API at \(hubs[0])/api/v1/mobile")
                if hubs.count > 1 { say("Also reachable at: \(hubs.dropFirst().joined(separator: ", "))") }
                say("Certificate fingerprint (the app pins it): \(grouped(fingerprint))")
                say("Pair a phone: argus-hub pair --data-dir \(path), then on the phone's side:")
                say("  argus pair --hub \(hubs[0]) --fingerprint \(fingerprint) --code CODE")
            }
        }
        configuration.onOwnerPage = { url in
            if json {
                let data = try? JSONSerialization.data(
                    withJSONObject: ["event": "owner_page", "url": url],
                    options: [.sortedKeys, .withoutEscapingSlashes])
                say(String(decoding: data ?? Data(), as: UTF8.self))
            } else {
                say("The owner's page (this machine only): \(url)")
            }
        }
        var logger = Logger(label: "argus-hub")
        logger.logLevel = .info
        try await makeHubApplication(configuration, logger: logger).runService()
    }

    /// The APNs settings from `--apns-*`: nil when none is given; all of key, key id, team id and topic otherwise.
    public static func push(
        key: String?, keyId: String?, teamId: String?, topic: String?, server: String?, trust: String?
    ) throws -> APNsConfiguration? {
        let given = [key, keyId, teamId, topic].compactMap { $0 }
        guard !given.isEmpty || server != nil || trust != nil else { return nil }
        guard let key, let keyId, let teamId, let topic else {
            throw HubError("push needs all of --apns-key FILE.p8, --apns-key-id, --apns-team-id and --apns-topic.")
        }
        for (name, value) in [("--apns-key-id", keyId), ("--apns-team-id", teamId)]
        where value.count != 10 || !value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw HubError("\(name) is the 10 letters and digits Apple shows for it (\(value.prefix(20)) is not).")
        }
        let pem: String
        do {
            guard let text = try SecretFile.load(URL(fileURLWithPath: key)) else {
                throw HubError("--apns-key \(key): no such file (the .p8 key from Apple's developer site).")
            }
            pem = text
        } catch let error as IdentityStoreError {
            throw HubError("--apns-key: \(error)")
        }
        var configuration = APNsConfiguration(teamId: teamId, keyId: keyId, privateKeyPEM: pem, topic: topic)
        switch server {
        case nil, "production": configuration.server = APNsConfiguration.production
        case "sandbox": configuration.server = APNsConfiguration.sandbox
        case let text?:
            guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
                throw HubError("--apns-server is production, sandbox or an https:// URL (\(text.prefix(60)) is not).")
            }
            configuration.server = url
        }
        if let trust {
            guard let text = try? String(contentsOfFile: trust, encoding: .utf8), text.contains("BEGIN CERTIFICATE")
            else { throw HubError("--apns-trust \(trust): not a PEM certificate file.") }
            configuration.trustRootsPEM = text
        }
        return configuration
    }

    /// `argus-hub pair`: the lines to print for a new code, with the fingerprint the app checks the hub by; with
    /// `qrAddress` (HOST:PORT the phone reaches the hub at) also a QR code of all three for the app to scan.
    public static func pair(_ directory: URL, json: Bool, qrAddress: String? = nil) throws -> [String] {
        let admin = try HubAdmin(dataDirectory: directory)
        let fingerprint = try HubSecrets.loadOrCreate(directory: directory).certificateFingerprint
        var hub: String?
        if let qrAddress {
            guard let url = URL(string: "https://\(qrAddress)"), url.host != nil, url.port != nil else {
                throw HubError(
                    "--qr-address is HOST:PORT, the address a phone reaches this hub at (\(qrAddress.prefix(60)))")
            }
            hub = url.absoluteString
        }
        let (code, expiresAt) = try admin.pair()
        let when = ISO8601DateFormatter().string(from: expiresAt)
        let qrText = hub.map { PairingQR(hub: $0, fingerprint: fingerprint, code: code).text }
        if json {
            var object: [String: Any] = [
                "pairing_code": code, "expires_at": when, "expires_in_seconds": 300, "cert_fingerprint": fingerprint,
            ]
            if let qrText { object["qr"] = qrText }
            let data = try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
            return [String(decoding: data, as: UTF8.self)]
        }
        var lines: [String] = []
        if let qrText {
            do {
                lines.append(try QRCodeEncoder.encode(qrText).terminalText())
            } catch {
                throw HubError("the QR code could not be made: \(error)")
            }
            lines.append("Scan it with the app, or type:")
        }
        return lines + [
            "Pairing code: \(code.prefix(3)) \(code.suffix(3))",
            "Type it into the app within 5 minutes (until \(when)); it works once.",
            "The app checks the hub by its certificate fingerprint: \(grouped(fingerprint))",
        ]
    }

    /// The addresses a phone can use for a hub listening on `host`: the host itself, or, for a wildcard (0.0.0.0,
    /// ::), this machine's addresses on its networks (IPv4 first, loopback only when there is nothing else). Never
    /// empty.
    static func reachableHosts(listening host: String) -> [String] {
        guard ["0.0.0.0", "::", "[::]"].contains(host) else { return [host] }
        let found = LocalAddresses.lan().filter { host != "0.0.0.0" || !$0.contains(":") }
        return found.isEmpty ? ["127.0.0.1"] : found
    }

    /// An IPv6 address in brackets, as a URL writes it.
    static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// 64 hex digits in groups of four, as people compare them.
    static func grouped(_ hex: String) -> String {
        stride(from: 0, to: hex.count, by: 4).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return String(hex[start..<(hex.index(start, offsetBy: 4, limitedBy: hex.endIndex) ?? hex.endIndex)])
        }.joined(separator: " ")
    }

    /// `argus-hub devices list`: one line per device (JSON objects, or words safe for a terminal).
    public static func devices(_ directory: URL, json: Bool) throws -> [String] {
        let devices = try HubAdmin(dataDirectory: directory).devices()
        let format = ISO8601DateFormatter()
        if devices.isEmpty && !json { return ["No devices paired yet: `argus-hub pair` makes a code."] }
        return devices.map { device in
            guard json else {
                let state = device.isActive ? "paired" : "revoked"
                return "\(device.deviceId)  \(printable(device.deviceName)) (\(device.deviceType), \(state))"
            }
            let object: [String: Any] = [
                "device_id": device.deviceId, "device_name": device.deviceName, "device_type": device.deviceType,
                "active": device.isActive, "paired_at": format.string(from: device.createdAt),
                "push": device.apnsToken != nil,
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// `argus-hub devices revoke`: what to print once done.
    public static func revoke(_ directory: URL, device: String) throws -> String {
        let revoked = try HubAdmin(dataDirectory: directory).revoke(device)
        return "Revoked \(revoked.deviceId) (\(printable(revoked.deviceName))): its tokens no longer work."
    }

    /// A name a phone chose, safe for a terminal (control and bidi characters shown as U+XXXX).
    static func printable(_ text: String) -> String {
        String(
            text.unicodeScalars.map { scalar in
                scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
                    || (0x2066...0x2069).contains(scalar.value)
                    ? "U+\(String(scalar.value, radix: 16, uppercase: true))" : String(scalar)
            }.joined())
    }

    // MARK: CribCall monitors

    /// How `argus-hub monitors pair` reaches a monitor: the options of `cribcall pair`.
    public struct MonitorPairing: Sendable {
        /// The monitor's QR code text (its JSON).
        public var qr: String?
        /// Pair with the PIN the monitor shows.
        public var pin = false
        /// The monitor by id or name, found on the LAN (PIN pairing).
        public var monitor: String?
        /// HOST:PORT (with a QR code, HOST alone uses the QR's port).
        public var address: String?
        /// The monitor's certificate fingerprint (PIN pairing by address).
        public var fingerprint: String?
        /// What to call the monitor (PIN pairing; a QR code carries it).
        public var monitorName: String?
        /// The PIN, for scripts; otherwise asked for on the terminal.
        public var pinCode: String?

        public init() {}
    }

    /// `argus-hub monitors pair`: pairs the hub with a CribCall monitor, as a listener named `hubName`.
    public static func pairMonitor(_ directory: URL, _ pairing: MonitorPairing, hubName: String?) async throws
        -> String
    {
        var request = CribCallRuntime.MonitorPairing(name: hubName ?? "Argus on \(ProcessInfo.processInfo.hostName)")
        request.qr = pairing.qr
        request.pin = pairing.pin
        request.monitor = pairing.monitor
        request.address = pairing.address
        request.fingerprint = pairing.fingerprint
        request.monitorName = pairing.monitorName
        request.pinCode = pairing.pinCode
        do {
            _ = try HubSecrets.loadOrCreate(directory: directory)  // the hub's directory, 0700, before CribCall's in it
        } catch {
            throw HubError("\(error)")
        }
        return try await monitorCommand {
            try await NurseryCommands.pair(request, hub: directory, enterPIN: askForPIN)
        }
    }

    /// `argus-hub monitors list`.
    public static func monitors(_ directory: URL, json: Bool) async throws -> [String] {
        try await monitorCommand { try NurseryCommands.list(hub: directory, json: json) }
    }

    /// `argus-hub monitors forget`.
    public static func forgetMonitor(_ directory: URL, _ id: String) async throws -> String {
        try await monitorCommand { try await NurseryCommands.forget(id, hub: directory) }
    }

    /// Asks for the monitor's PIN on the terminal (a wrong one said as such).
    @Sendable private static func askForPIN(_ prompt: CribCallRuntime.MonitorPairing.PINPrompt) async -> String? {
        print(prompt.question, terminator: "")
        return readLine()?.filter { !$0.isWhitespace }
    }

    /// CribCall's refusals in the hub's terms: a request that cannot work is a ``HubError`` (shown with the usage),
    /// anything else a ``HubFailure``.
    private static func monitorCommand<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as CribCallRuntimeError {
            if failure.code == .invalidRequest { throw HubError(failure.message) }
            throw HubFailure(description: failure.message)
        } catch let error as HubError {
            throw error
        } catch {
            throw HubFailure(description: "\(error)")
        }
    }

    /// One line on stdout, at once (not held in a buffer while the hub runs).
    public static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
