public import CribCallProtocol
public import DesktopNotifications
public import SafetyDetection

/// The listener's stream controls: `--open` once connected, and the keys on a terminal (l listen, v video, p keep
/// live, e end; and for the latest safety alert c checking, o okay, m mute 5 minutes). Feed it every
/// ``ListenerEvent``; it tracks the current stream of ``monitorId`` and the latest alert of any monitor.
public actor StreamControls {
    /// A key on the terminal.
    public enum Key: Character, Sendable, CaseIterable {
        /// Open an audio stream.
        case listen = "l"
        /// Open an audio and video stream.
        case video = "v"
        /// Keep the current stream live past its automatic end.
        case pin = "p"
        /// End the current stream.
        case end = "e"
        /// "I am checking" on the latest safety alert.
        case checking = "c"
        /// "Mark as okay" on the latest safety alert.
        case okay = "o"
        /// Mute the latest alert's kind for 5 minutes, for everyone.
        case mute = "m"

        /// The key a typed byte stands for, if any.
        public init?(byte: UInt8) {
            self.init(rawValue: Character(UnicodeScalar(byte)))
        }
    }

    let service: ListenerService
    let mediaType: MediaType
    /// The monitor the keys act on: `--open`'s, or the only paired one.
    public nonisolated let monitorId: String?
    private let onFailure: @Sendable (String) -> Void
    /// The stream of ``monitorId`` now playing, if any.
    public private(set) var current: String?
    /// The latest live safety alert: its monitor and id (the alert keys act on it).
    public private(set) var latestAlert: (monitorId: String, alertId: String)?
    private var opened = false

    /// - Parameters:
    ///   - mediaType: What `--open` asks for.
    ///   - onFailure: Told why a stream did not open (the key or `--open` had no other effect).
    public init(
        service: ListenerService,
        mediaType: MediaType,
        monitorId: String?,
        onFailure: @escaping @Sendable (String) -> Void
    ) {
        self.service = service
        self.mediaType = mediaType
        self.monitorId = monitorId
        self.onFailure = onFailure
    }

    /// Follows the listener's events; with `openOnConnect`, opens the first stream when ``monitorId`` connects.
    public func observe(_ event: ListenerEvent, openOnConnect: Bool) async {
        switch event {
        case .connected(let id, _, _) where openOnConnect && !opened && id == monitorId:
            opened = true
            await start(mediaType)
        case .streamStarted(_, let sessionId, _):
            current = sessionId
        case .streamEnded(_, let sessionId, _) where sessionId == current:
            current = nil
        case .safetyAlert(let id, _, let alert) where alert.replayed != true:
            latestAlert = (id, alert.alertId)
        default:
            break
        }
    }

    /// Acts on a key.
    public func press(_ key: Key) async {
        switch key {
        case .listen: await start(.audio)
        case .video: await start(.audioVideo)
        case .pin:
            if let current { try? await service.pinStream(sessionId: current) }
        case .end:
            if let current { await service.endStream(sessionId: current) }
        case .checking: await act(.checking)
        case .okay: await act(.okay)
        case .mute: await act(.mute)
        }
    }

    /// Acts on a button of a safety alert (a desktop notification's): opens that monitor's live camera, or
    /// sends the action on that alert for everyone.
    public func press(_ button: SafetyWording.Button, monitorId: String, alertId: String) async {
        guard let action = button.action else {
            await start(.audioVideo, monitorId: monitorId)
            return
        }
        await act(action, on: (monitorId, alertId))
    }

    /// Acts on every click on a safety alert's desktop notification button until `clicks` ends.
    public func follow(clicks: AsyncStream<DesktopNotification.Invocation>) async {
        for await click in clicks {
            guard let clicked = ListenerEvent.alertButton(clicked: click) else { continue }
            await press(clicked.button, monitorId: clicked.monitorId, alertId: clicked.alertId)
        }
    }

    private func act(_ action: AlertActionKind) async {
        guard let latestAlert else {
            onFailure("no safety alert to act on yet")
            return
        }
        await act(action, on: latestAlert)
    }

    private func act(_ action: AlertActionKind, on alert: (monitorId: String, alertId: String)) async {
        do {
            try await service.act(action, on: alert.alertId, monitorId: alert.monitorId)
        } catch {
            onFailure("\(error)")
        }
    }

    private func start(_ type: MediaType) async {
        guard let monitorId else { return }
        await start(type, monitorId: monitorId)
    }

    /// Opens a stream of `monitorId` unless one is playing already.
    private func start(_ type: MediaType, monitorId: String) async {
        guard current == nil else { return }
        do {
            current = try await service.openStream(monitorId: monitorId, mediaType: type)
        } catch {
            onFailure("the stream did not open: \(error)")
        }
    }
}
