import ArgumentParser
import CanonicalJSON
import CribCallListener
import CribCallProtocol
import CribCallStore
import DesktopNotifications
import DeviceIdentityStore
import Foundation
import QUIC

/// `cribcall listen`: stays connected to every paired monitor and shows their alerts.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Listen for alerts from every paired monitor (Ctrl-C to stop).",
        discussion: "A link that stays silent for 15 s is reported, and missed alerts are replayed when it is back."
    )

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "This listener's name.")
    var name = ProcessInfo.processInfo.hostName

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Flag(name: .customLong("no-notify"), help: "Do not raise desktop notifications (they need a session bus).")
    var noNotify = false

    func run() async throws {
        let directory = data.url
        let identity = try DeviceIdentityStore(directory: directory).loadOrCreate().identity
        let database = try CribCallDatabase(directory: directory)
        guard !(try database.trustedMonitors()).isEmpty else {
            throw ValidationError("no monitor is paired yet: run `cribcall pair` first")
        }
        let service = ListenerService(identity: identity, name: name, database: database,
                                      connector: try QUICConnector(identity: identity))
        let notifications = noNotify ? nil : await Self.desktopNotifications()
        let listening = Task {
            for await event in await service.listen() {
                let line = json ? Self.json(event).canonicalString : Self.text(event)
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
                if let notification = event.desktopNotification { notifications?.yield(notification) }
            }
            notifications?.finish()
        }
        let stop = ShutdownSignals { listening.cancel() }
        await listening.value
        _ = stop
    }

    /// Raises desktop notifications one after the other (so updates of one monitor's bubble keep their order),
    /// never holding up the terminal output. Nil, after one line on stderr, when there is no notification service.
    static func desktopNotifications() async -> AsyncStream<DesktopNotification>.Continuation? {
        let notifier: FreedesktopNotifier
        do {
            notifier = try await FreedesktopNotifier.connect()
        } catch {
            let reason = (error as? DesktopNotificationError)?.message ?? "\(error)"
            let line = "cribcall listen: no desktop notifications (\(reason)); alerts are shown here only\n"
            FileHandle.standardError.write(Data(line.utf8))
            return nil
        }
        let (stream, continuation) = AsyncStream.makeStream(of: DesktopNotification.self,
                                                            bufferingPolicy: .bufferingNewest(32))
        Task {
            var warned = false
            for await notification in stream {
                do {
                    _ = try await notifier.notify(notification)
                } catch where !warned {
                    warned = true
                    FileHandle.standardError.write(Data("cribcall listen: a desktop notification failed: \(error)\n".utf8))
                } catch {}
            }
        }
        return continuation
    }

    static func json(_ event: ListenerEvent) -> JSONValue {
        switch event {
        case .connected(let id, let name, let address):
            ["event": "connected", "monitorId": .string(id), "monitorName": .string(name), "address": .string(address)]
        case .noise(let id, let name, let noise):
            ["event": "noise", "monitorId": .string(id), "monitorName": .string(name), "seq": .number(Double(noise.seq)),
             "peakLevel": .number(Double(noise.peakLevel)), "timestamp": .number(Double(noise.timestamp)),
             "replayed": .bool(noise.replayed ?? false)]
        case .linkLost(let id, let name, let reason):
            ["event": "link_lost", "monitorId": .string(id), "monitorName": .string(name), "reason": .string(reason)]
        case .linkRestored(let id, let name):
            ["event": "link_restored", "monitorId": .string(id), "monitorName": .string(name)]
        case .unauthorized(let id, let name, let message):
            ["event": "unauthorized", "monitorId": .string(id), "monitorName": .string(name), "message": .string(message)]
        case .streamStarted(let id, let sessionId, let mediaType):
            ["event": "stream_started", "monitorId": .string(id), "sessionId": .string(sessionId),
             "mediaType": .string(mediaType.rawValue)]
        case .streamEndingSoon(let id, let sessionId, let seconds):
            ["event": "stream_ending_soon", "monitorId": .string(id), "sessionId": .string(sessionId),
             "secondsRemaining": .number(Double(seconds))]
        case .streamEnded(let id, let sessionId, let reason):
            ["event": "stream_ended", "monitorId": .string(id), "sessionId": .string(sessionId), "reason": .string(reason)]
        }
    }

    static func text(_ event: ListenerEvent) -> String {
        switch event {
        case .connected(_, let name, let address): "Connected to \"\(name)\" at \(address)."
        case .noise(_, let name, let noise):
            "🔔 \(noise.replayed == true ? "Missed alert" : "Noise") from \"\(name)\" — peak level \(noise.peakLevel) "
                + "(#\(noise.seq), \(Date(timeIntervalSince1970: Double(noise.timestamp) / 1000).formatted(date: .omitted, time: .standard)))"
        case .linkLost(_, let name, let reason): "⚠️  Lost the link to \"\(name)\" (\(reason)); reconnecting…"
        case .linkRestored(_, let name): "Link to \"\(name)\" is back; missed alerts follow."
        case .unauthorized(_, let name, let message): "\"\(name)\" no longer accepts this listener: \(message)"
        case .streamStarted(_, let sessionId, let mediaType):
            "▶️  Live \(mediaType == .audio ? "audio" : "audio and video") (stream \(sessionId.prefix(8)))."
        case .streamEndingSoon(_, let sessionId, let seconds):
            "Stream \(sessionId.prefix(8)) ends in \(seconds) s unless pinned."
        case .streamEnded(_, let sessionId, let reason): "Stream \(sessionId.prefix(8)) ended (\(reason))."
        }
    }
}
