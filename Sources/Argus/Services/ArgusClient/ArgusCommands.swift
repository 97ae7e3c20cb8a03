import ArgusAPI
import ArgusAuth
import ArgusClientTransport
public import Foundation

/// Every `argus` command as a function (the executable only parses arguments): pairing with a hub by its code and
/// certificate fingerprint, events, thumbnails, cameras, snapshots, and watching for new events.
public enum ArgusCommands {
    /// `$XDG_CONFIG_HOME/argus` (`~/.config/argus`), or `--config-dir`.
    public static func configDirectory(_ option: String?) -> URL {
        if let option { return URL(fileURLWithPath: option, isDirectory: true) }
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("argus", isDirectory: true)
        }
        return URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".config/argus", isDirectory: true)
    }

    /// `argus pair --qr TEXT`: the same, with what the hub's pairing QR code carries.
    public static func pair(qr: String, name: String, deviceId: String?, config: URL) async throws -> String {
        guard let scanned = PairingQR(scanned: qr) else {
            throw ArgusClientError.invalid("--qr is the text of the QR code `argus-hub pair --qr-address` shows")
        }
        return try await pair(
            hub: scanned.hub, fingerprint: scanned.fp, code: scanned.code, name: name, deviceId: deviceId,
            config: config)
    }

    /// `argus pair`: checks the hub's certificate against `fingerprint`, exchanges `code` for tokens, saves them.
    public static func pair(
        hub: String, fingerprint: String, code: String, name: String, deviceId: String?, config: URL
    ) async throws -> String {
        guard let url = URL(string: hub), url.scheme != nil else {
            throw ArgusClientError.unreachable("--hub is https://HOST:PORT, as argus-hub prints it")
        }
        let digits = code.filter(\.isNumber)
        let transport = try await connect(url, fingerprint)
        let device = deviceId ?? "argus-cli-" + UUID().uuidString.lowercased().prefix(8)
        let session: ArgusSession
        do {
            session = try await ArgusSession.pair(
                code: digits, deviceName: name, deviceId: String(device), deviceType: .other, hub: url,
                fingerprint: fingerprint.lowercased().filter(\.isHexDigit), transport: transport.transport,
                store: FileSessionStore(directory: config))
        } catch {
            await transport.shutdown()
            throw error
        }
        await transport.shutdown()
        return "Paired with \(url.host ?? hub) as \(await session.deviceId); tokens kept in "
            + FileSessionStore(directory: config).file.path + " (0600)."
    }

    /// Runs `body` with the saved session over a transport pinned to its hub.
    public static func withSession<T: Sendable>(
        config: URL, _ body: (ArgusSession) async throws -> T
    ) async throws -> T {
        let store = FileSessionStore(directory: config)
        guard let saved = try store.load() else { throw ArgusClientError.notPaired }
        let transport = try await connect(saved.hub, saved.fingerprint)
        do {
            guard let session = try ArgusSession.resume(transport: transport.transport, store: store) else {
                throw ArgusClientError.notPaired
            }
            let result = try await body(session)
            await transport.shutdown()
            return result
        } catch {
            await transport.shutdown()
            throw error
        }
    }

    /// `argus events`: one line per event, newest first (JSON objects with `json`).
    public static func events(config: URL, page: Int, limit: Int, json: Bool) async throws -> [String] {
        let page = try await withSession(config: config) { try await $0.events(page: page, limit: limit) }
        if page.events.isEmpty && !json { return ["No events yet."] }
        return page.events.map { line($0, json: json) }
            + (json || !page.hasNext ? [] : ["… \(page.total) in all: --page \(page.page + 1) for more"])
    }

    /// `argus watch`: prints events newer than the newest seen, every `interval` seconds, until cancelled.
    public static func watch(config: URL, interval: Double, json: Bool, print: @Sendable (String) -> Void) async throws
    {
        try await withSession(config: config) { session in
            var seen = Set(try await session.recent(limit: 20).map(\.id))
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(interval))
                for event in try await session.recent(limit: 20).reversed() where !seen.contains(event.id) {
                    seen.insert(event.id)
                    print(
                        json
                            ? jsonLine(event)
                            : "\(stamp(event.createdAt))  \(event.cameraName): \(event.description ?? "an event")")
                }
            }
        }
    }

    /// `argus thumbnail` / `argus snapshot`: the JPEG to `output`.
    public static func picture(config: URL, eventId: String?, cameraId: String?, output: String) async throws -> String
    {
        let jpeg = try await withSession(config: config) { session in
            if let eventId { return try await session.thumbnail(eventId: eventId) }
            return try await session.snapshot(cameraId: cameraId ?? "")
        }
        try jpeg.write(to: URL(fileURLWithPath: output))
        return "Wrote \(output) (\(jpeg.count) bytes)."
    }

    /// `argus cameras`.
    public static func cameras(config: URL, json: Bool) async throws -> [String] {
        let cameras = try await withSession(config: config) { try await $0.cameras() }
        return cameras.map { camera in
            json
                ? jsonLine(camera)
                : "\(camera.id)  \(camera.name) (\(camera.sourceType.rawValue), \(camera.isOnline ? "online" : "offline"))"
        }
    }

    static func line(_ event: Components.Schemas.MobileEvent, json: Bool) -> String {
        json
            ? jsonLine(event)
            : "\(stamp(event.createdAt))  \(event.cameraName): \(event.description ?? "an event")  [\(event.id)]"
    }

    /// A transport pinned to the hub, its failures in the client's words.
    static func connect(_ hub: URL, _ fingerprint: String) async throws -> PinnedTransport {
        do {
            return try await PinnedTransport.connect(to: hub, fingerprint: fingerprint)
        } catch let error as TransportError {
            switch error {
            case .pinMismatch: throw ArgusClientError.untrusted(error.description)
            case .badAddress(let why): throw ArgusClientError.invalid(why)
            case .unreachable(let why): throw ArgusClientError.unreachable(why)
            }
        }
    }

    static func stamp(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// An object of the API as the API writes it (`--json`): its field names, dates in ISO 8601, absent fields
    /// left out.
    static func jsonLine(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
