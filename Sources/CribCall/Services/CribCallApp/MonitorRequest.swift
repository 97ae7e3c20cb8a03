import AudioCapture
import CanonicalJSON
import ControlSocket
import CribCallDiscovery
import CribCallMonitor
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import CribCallWeb
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import LocalWebApp
import Logging
import Media
import ProgramLifecycle
import QUIC
import ServiceDiscovery
import SoundDetection
import StreamMedia
import Terminal
import VideoCapture

/// `cribcall monitor`: the baby-room device. Composes the monitor service with its adapters (QUIC, the microphone,
/// GStreamer streams, DNS-SD, the terminal) and prints its events until SIGINT or SIGTERM.
public struct MonitorRequest: Sendable {
    /// The monitor's name (saved in the settings).
    public var name: String?
    /// UDP port of the control channel.
    public var port = 48080
    /// Address to listen on (default: all interfaces, IPv6 and IPv4).
    public var host = "::"
    /// Where to listen: ``audioSourceSyntax``.
    public var audioSource = "auto"
    /// The camera for audio+video streams: ``videoSourceSyntax``.
    public var videoSource = "auto"
    /// Show a pairing QR code at start.
    public var qr = false
    /// Also write the pairing QR code as a PNG image to this file (mode 0600, removed once the code is used, expired,
    /// replaced or the monitor stops; a symbolic link there is refused).
    public var qrPNG: String?
    /// One JSON object per line instead of text.
    public var json = false
    /// Do not announce the monitor on the LAN.
    public var noDiscovery = false
    /// Stream only over these local addresses (default: every interface).
    public var iceAddresses: [String] = []
    /// Watch the camera (``videoSource``) with CribAlert's safety detectors.
    public var safety = false
    /// Serve the app for parents on this loopback port (0: any free port); nil: no app.
    public var webPort: Int?

    /// The forms of `--audio-source`.
    public static let audioSourceSyntax = AudioSourceSpec.syntax
    /// The forms of `--video-source`.
    public static let videoSourceSyntax = GStreamerMediaEngine.VideoSource.syntax

    public init() {}

    /// Runs the monitor until SIGINT or SIGTERM (or until the microphone fails).
    ///
    /// - Throws: ``CommandFailure`` (usage) for a bad source or port, an unusable data directory, a taken port, or a
    ///   `--qr-png` path that is a symbolic link (or anything else but a regular file); ``CommandFailure`` (status
    ///   1) when the microphone fails while it runs: a monitor that hears nothing must not look alive, and a
    ///   service manager restarts a program that fails (the unit's `Restart=on-failure`), never one that exits 0.
    public func run(in data: CribCallDataDirectory) async throws {
        guard (0...65_535).contains(port) else {
            throw CommandFailure.usage("--port \(port) is not a UDP port: give 1 to 65535 (0: any free port)")
        }
        let qrFile = qrPNG.map { PairingQRFile(path: $0) }
        do {
            try qrFile?.file.checkReplaceable()
        } catch {
            throw CommandFailure.usage("--qr-png: \(error)")
        }
        let input: any AudioInput
        let source: AudioSourceSpec
        let video: GStreamerMediaEngine.VideoSource?
        do {
            source = try AudioSourceSpec(parsing: audioSource)
            input = try AudioInputs.open(source)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        do {
            video = try GStreamerMediaEngine.VideoSource.parse(videoSource)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        let identity: DeviceIdentity
        let dtls: DTLSCertificate
        let database: CribCallDatabase
        do {
            let loaded = try data.identity()
            identity = loaded.identity
            dtls = loaded.dtls
            database = try data.database()
            if let name {
                _ = try database.updateMonitorSettings { $0.monitorName = name }
            }
        } catch {
            throw CommandFailure.usage("\(error)")
        }
        let log = Logger(label: "cribcall monitor")
        let listener: QUICListener
        do {
            var quic = QUICConfiguration()
            quic.logger = log
            listener = try await QUICListener.bind(host: host, port: port, identity: identity, configuration: quic)
        } catch {
            throw CommandFailure.usage(
                "\(error) — is another monitor running on port \(port)? Choose one with --port.")
        }
        // With --safety the detectors open the camera; live video streams watch it through them (a camera opens
        // once).
        var camera: VideoCapture?
        if safety {
            do {
                camera = try VideoCapture(source: Self.camera(video, audio: source))
            } catch {
                throw CommandFailure.usage("\(error.message); or run without --safety")
            }
        }
        // Live streams (WebRTC through GStreamer) carry the microphone sound detection listens to (one device,
        // shared); without the plugins the monitor still alerts, and says why not.
        let media: (any MediaEngine)?
        do {
            var configuration = GStreamerMediaEngine.Configuration(
                dtlsCertificate: dtls, audioSource: source, audioFeed: input.liveFeed, iceAddresses: iceAddresses,
                videoSource: video)
            configuration.videoFeed = camera?.liveFeed
            configuration.logger = log
            media = try GStreamerMediaEngine(configuration: configuration)
        } catch {
            log.warning("live streaming is off: \(error)")
            media = nil
        }
        let service = try MonitorService(
            identity: identity, database: database, transport: listener, mediaEngine: media, logger: log)
        // On a terminal, `q` shows a fresh pairing QR code (its token valid for 5 minutes).
        let keys =
            json
            ? nil
            : KeyPresses { key in
                if key == UInt8(ascii: "q") || key == UInt8(ascii: "Q") { Task { await service.showQR() } }
            }
        let output = Output(json: json, qrFile: qrFile, interactive: keys != nil)
        let app = webPort.map { _ in
            MonitorWebApp(
                service: service, database: database, camera: camera, mediaEngine: media,
                version: CribCallVersion.current)
        }
        await app?.followSetup()
        var web: WebAppService?
        if let app, let webPort {
            do {
                let server = try await app.serve(port: webPort)
                web = WebAppService(closeStreams: { await app.closeStreams() }, server: server, data: data)
                output.write(AppAddressFile.announce(server.url, in: data, json: json))
            } catch {
                // Nothing runs yet: the QUIC socket is all there is to close.
                await listener.shutdown()
                throw CommandFailure.usage("\(error) (--web \(webPort))")
            }
        }
        if let camera, !camera.detectsFaces {
            log.warning("no face detection (install gstreamer1.0-opencv and opencv-data): faces are not judged")
        }
        let control = try? await ControlSocketServer.start(path: data.controlSocket.path) { [camera] request in
            Self.answer(request, service: service, camera: camera)
        }
        if control == nil {
            log.warning("no control socket at \(data.controlSocket.path): `cribcall alert` cannot reach this monitor")
        }
        var advertisement: MonitorAdvertisementHandle?
        if !noDiscovery {
            do {
                advertisement = try await service.advertise(using: DNSSDServiceDiscovery())
            } catch {
                log.warning("not announced on the LAN: \(error)")
            }
        }
        let services = Services(
            output: EventOutputService(service: service, output: output, app: app), web: web,
            control: control,
            advertisement: advertisement.map { handle in
                ProgramLifecycle.AtShutdown("announcement") { await handle.cancel() }
            },
            detection: SoundDetectionService(service: service, input: input, logger: log),
            safety: camera.map { SafetyWatchService(service: service, camera: $0) },
            protocolService: ProtocolService(service: service, listener: listener, showingQR: qr || qrPNG != nil))
        defer { keys?.restore() }
        do {
            try await ProgramLifecycle.run(services.parts, logger: log)
        } catch let failure as SoundDetectionService.MicrophoneFailed {
            throw CommandFailure(
                "\(failure): the monitor stopped, since it could not hear the room. Check the microphone (arecord -l "
                    + "lists them) or choose one with --audio-source; as a service it is started again.")
        }
    }

    /// The camera the safety detectors watch: `--video-source`, or for `auto` the test pattern with a `test:`
    /// microphone and the default camera otherwise (as live streams choose theirs).
    static func camera(_ video: GStreamerMediaEngine.VideoSource?, audio: AudioSourceSpec) -> VideoSourceSpec {
        switch video {
        case .test: return .test
        case .v4l2(let device): return .camera(device: device)
        case nil:
            if case .test = audio { return .test }
            return .camera(device: nil)
        }
    }

    /// One request on the monitor's control socket (``MonitorControlRequest``): `trigger` raises an alert through the
    /// real path (`cribcall alert trigger`), `camera` lets go of the camera or tries it again, `status` tells the
    /// safety status.
    static func answer(_ request: JSONValue, service: MonitorService, camera: VideoCapture?) -> AsyncStream<JSONValue> {
        AsyncStream { continuation in
            Task {
                let answer: MonitorControlAnswer
                do throws(MonitorControlRequest.Invalid) {
                    answer = await answerOnce(
                        try MonitorControlRequest(json: request), service: service, camera: camera)
                } catch {
                    answer = .refused(error.message)
                }
                continuation.yield(answer.json)
                continuation.finish()
            }
        }
    }

    private static func answerOnce(_ request: MonitorControlRequest, service: MonitorService, camera: VideoCapture?)
        async -> MonitorControlAnswer
    {
        switch request {
        case .camera(let action):
            guard let camera else { return .refused("this monitor watches no camera: start it with --safety") }
            switch action {
            case .disconnect: camera.disconnect(reason: "camera disconnected")
            case .reconnect: camera.reconnect()
            }
            return .done
        case .trigger(let kind):
            switch await service.triggerAlert(kind) {
            case .success(let alert):
                return .raised(alertId: alert.alertId, seq: alert.seq, kind: alert.kind, severity: alert.severity)
            case .failure(let refusal):
                return .refused(refusal.description)
            }
        case .status:
            return .safety(await service.safetyStatus)
        }
    }

    /// Prints monitor events as text or JSON lines, and keeps the `--qr-png` file. On a terminal, the PIN's validity
    /// line counts down every second until the PIN is used, replaced or expired.
    struct Output: Sendable {
        let json: Bool
        let qrFile: PairingQRFile?
        /// Keys work (an interactive terminal): say so.
        let interactive: Bool
        private let terminal = TerminalOutput()

        init(json: Bool, qrFile: PairingQRFile?, interactive: Bool) {
            self.json = json
            self.qrFile = qrFile
            self.interactive = interactive
        }

        /// One line as it is.
        func write(_ line: String) {
            terminal.write(line + "\n")
        }

        func print(_ event: MonitorEvent) {
            terminal.stopCountdown()
            var written = false
            if let qrFile {
                do {
                    written = try qrFile.observe(event)
                } catch {
                    Logger(label: "cribcall monitor").warning("the pairing QR code is not in a file: \(error)")
                }
            }
            let line =
                json
                ? event.json.canonicalString
                : event.text(interactive: interactive, qrPNG: written ? qrFile?.file.path : nil)
            guard let line else { return }
            terminal.write(line + "\n")
            if !json, case .pin(_, _, let seconds, let attempts) = event, TerminalOutput.isInteractive {
                terminal.countDown(from: seconds) { PINDisplay.validity($0, attempts: attempts) }
            }
        }

        /// The monitor stopped: its pairing code is removed.
        func finish() {
            qrFile?.remove()
        }
    }
}
