import CanonicalJSON
import CribCallListener
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import CribCallSystemd
import CribCallWeb
import DesktopNotifications
import DeviceIdentityStore
import Foundation
import LocalWebApp
import Logging
import Media
import ProgramLifecycle
import QUIC
import ServiceDiscovery
import StreamMedia
import Synchronization
import Terminal

/// `cribcall listen`: stays connected to every paired monitor, shows their alerts (and desktop notifications), and
/// plays or records live streams, until SIGINT or SIGTERM.
public struct ListenRequest: Sendable {
    /// This listener's name.
    public var name: String
    /// One JSON object per line instead of text.
    public var json = false
    /// Do not raise desktop notifications.
    public var noNotify = false
    /// Open a live stream from this monitor (id, id prefix or name) once connected.
    public var open: String?
    /// With ``open`` (or the v key): audio and video instead of audio only.
    public var video = false
    /// Record streams instead of playing them: FILE.wav, FILE.mkv or a directory.
    public var record: String?
    /// Receive live streams only over these local addresses (default: every interface).
    public var iceAddresses: [String] = []
    /// What a noise alert does from now on: notify or open.
    public var onNoise: String?
    /// Serve the app for parents on this loopback port (0: any free port); nil: no app.
    public var webPort: Int?

    public init(name: String) {
        self.name = name
    }

    /// Listens until SIGINT or SIGTERM, or until every monitor it follows no longer trusts it.
    ///
    /// - Throws: ``CommandFailure`` (usage) when nothing is paired or an option is wrong; ``CommandFailure``
    ///   (status ``notTrustedStatus``) when every monitor followed revoked or unpaired this listener: there is
    ///   nothing left to listen to until it pairs again, and a service manager must not take that for a crash.
    public func run(in data: CribCallDataDirectory) async throws {
        let loaded = try data.identity()
        let identity = loaded.identity
        let database = try data.database()
        let monitors = try database.trustedMonitors()
        guard !monitors.isEmpty || webPort != nil else {
            throw CommandFailure.usage(
                "no monitor is paired yet: run `cribcall pair` first, or pair from the app (`--web 0`)")
        }
        let target = try open.map { try MonitorsCommands.resolve($0, among: monitors) }
        if let onNoise {
            guard let action = OnNoiseAction(rawValue: onNoise) else {
                throw CommandFailure.usage("--on-noise must be notify or open (got '\(onNoise)')")
            }
            try database.setListenerOnNoise(action)
        }
        let recording = try record.map { try Self.recordingFiles($0, json: json) }
        let log = Logger(label: "cribcall listen")
        let connector = try QUICConnector(identity: identity)
        let media: (any MediaEngine)?
        do {
            var configuration = GStreamerMediaEngine.Configuration(
                dtlsCertificate: loaded.dtls, iceAddresses: iceAddresses,
                receiverOutput: recording.map { .record($0) } ?? .play)
            configuration.logger = log
            media = try GStreamerMediaEngine(configuration: configuration)
        } catch {
            log.warning("live streams are off: \(error)")
            media = nil
        }
        // With the app, streams play in its page (the media goes from the monitor to the browser), and here while
        // no page is open.
        let app = webPort.map { _ in
            ListenerWebApp(
                identity: identity, name: name, database: database, connector: connector, fallback: media,
                browser: DNSSDServiceDiscovery(), version: CribCallVersion.current, logger: log)
        }
        let service =
            app?.service
            ?? ListenerService(
                identity: identity, name: name, database: database, connector: connector, mediaEngine: media,
                logger: log)
        // A monitor that moved (a new DHCP lease, a restart on another port) is found again by mDNS.
        await service.findMovedMonitors(with: DNSSDServiceDiscovery())
        let streams = StreamControls(
            service: service, mediaType: video ? .audioVideo : .audio,
            monitorId: target?.monitorId ?? (monitors.count == 1 ? monitors[0].monitorId : nil)
        ) { failure in
            log.warning("\(failure)")
        }
        let notifications = noNotify ? nil : await Self.desktopNotifications(clicks: streams)
        await app?.start()
        let refused = Mutex<Set<String>>([])
        let listening = ListeningService { [json] in
            for await event in await service.listen(keepOpen: app != nil) {
                if case .unauthorized(let monitorId, _, _) = event { refused.withLock { _ = $0.insert(monitorId) } }
                let line = json ? event.json.canonicalString : event.text
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
                // Notifications off in the app's Alert Preferences (the same database): the line above only. Unreadable
                // preferences do not silence an alarm.
                if let notification = event.desktopNotification, Self.notificationsWanted(in: database, log: log) {
                    notifications?.yield(notification)
                }
                await streams.observe(event, openOnConnect: target != nil)
                await app?.observe(event)
            }
            notifications?.finish()
        }
        var web: WebAppService?
        if let app, let webPort {
            do {
                let server = try await app.serve(port: webPort)
                web = WebAppService(closeStreams: { await app.closeStreams() }, server: server, data: data)
                FileHandle.standardOutput.write(
                    Data((AppAddressFile.announce(server.url, in: data, json: json) + "\n").utf8))
            } catch {
                throw CommandFailure.usage("\(error) (--web \(webPort))")
            }
        }
        // On a terminal: l listen, v video, p keep the stream live (pin), e end it; c, o, m act on the latest alert.
        let keys =
            json
            ? nil
            : KeyPresses { byte in
                guard let key = StreamControls.Key(byte: byte) else { return }
                Task { await streams.press(key) }
            }
        if keys != nil, streams.monitorId != nil {
            FileHandle.standardOutput.write(Data("Keys: l listen, v video, p keep live, e end the stream.\n".utf8))
        }
        if keys != nil {
            FileHandle.standardOutput.write(
                Data("On a safety alert: c I am checking, o mark as okay, m mute for 5 minutes.\n".utf8))
        }
        // The app (with --web), then the listening: stopped in the reverse order on SIGINT or SIGTERM, or when every
        // monitor refused this listener (its listening ends).
        let parts = (web.map { [ProgramLifecycle.Part($0)] } ?? []) + [ProgramLifecycle.Part(listening)]
        defer { keys?.restore() }
        try await ProgramLifecycle.run(parts, logger: log)
        let names = Dictionary(monitors.map { ($0.monitorId, $0.name) }, uniquingKeysWith: { first, _ in first })
        let refusedBy = refused.withLock { $0 }
        if !listening.stopped, !refusedBy.isEmpty {
            let who = refusedBy.sorted().map { "\"\(PeerName.sanitized(names[$0] ?? $0))\"" }.joined(separator: ", ")
            throw CommandFailure(
                "\(who) no longer \(refusedBy.count == 1 ? "accepts" : "accept") this listener: pair again with "
                    + "`cribcall pair`", kind: .failure(status: Self.notTrustedStatus))
        }
    }

    /// The exit status when the monitors no longer trust this listener (its systemd unit does not restart it then).
    public static let notTrustedStatus = CribCallServiceUnit.listenerNotTrustedStatus

    /// `--record PATH`: a .wav or .mkv file, an existing directory, or a new directory (a path without an
    /// extension, created 0700). Each stream's file is announced on stdout when its recording starts.
    static func recordingFiles(_ path: String, json: Bool) throws -> RecordingFiles {
        let url = URL(fileURLWithPath: path)
        if !FileManager.default.fileExists(atPath: url.path), url.pathExtension.isEmpty {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        do {
            return try RecordingFiles(path: url) { sessionId, file in
                let line =
                    json
                    ? JSONValue.object([
                        "event": "recording", "sessionId": .string(sessionId), "file": .string(file.path),
                    ]).canonicalString
                    : "Recording stream \(sessionId) to \(file.path)"
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        } catch {
            throw CommandFailure.usage("--record: \(error.message)")
        }
    }

    /// Whether the app's Alert Preferences let desktop notifications show; true when they cannot be read (said).
    static func notificationsWanted(in database: CribCallDatabase, log: Logger) -> Bool {
        do {
            return try database.appPreferences().notifications
        } catch {
            log.warning("could not read the alert preferences; notifying anyway: \(error)")
            return true
        }
    }

    /// Raises desktop notifications one after the other (so updates of one monitor's bubble keep their order),
    /// never holding up the terminal output, and acts on their buttons through `clicks`. Nil, after one line on
    /// stderr, when there is no notification service.
    static func desktopNotifications(clicks: StreamControls) async -> AsyncStream<DesktopNotification>.Continuation? {
        let log = Logger(label: "cribcall listen")
        let notifier: FreedesktopNotifier
        do {
            notifier = try await FreedesktopNotifier.connect()
        } catch {
            let reason = (error as? DesktopNotificationError)?.message ?? "\(error)"
            log.warning("no desktop notifications (\(reason)); alerts are shown here only")
            return nil
        }
        if !notifier.capabilities.contains("actions") {
            log.info("the desktop notifications have no buttons here (\(notifier.server.name)); use the keys")
        }
        let invocations = notifier.actionInvocations()
        Task { await clicks.follow(clicks: invocations) }
        let (stream, continuation) = AsyncStream.makeStream(
            of: DesktopNotification.self, bufferingPolicy: .bufferingNewest(32))
        Task {
            var warned = false
            for await notification in stream {
                do {
                    _ = try await notifier.notify(notification)
                } catch  where !warned {
                    warned = true
                    log.warning("a desktop notification failed: \(error)")
                } catch {}
            }
        }
        return continuation
    }
}
