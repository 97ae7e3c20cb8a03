import ArgumentParser
import AudioCapture
import CanonicalJSON
import CribCallDiscovery
import CribCallMonitor
import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import Logging
import Media
import QRCode
import QUIC
import ServiceDiscovery
import SoundDetection
import StreamMedia
import Terminal
import UnixSignals

/// `cribcall monitor`: the baby-room device. Wiring and printing only; the work is in MonitorService.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Run the monitor: listen for sound, alert paired listeners, pair new ones.",
        discussion: """
            Listeners pair by PIN (they ask; the PIN appears here) or by QR code (--qr, or press q). Noise events \
            go to every connected paired listener. Stop with Ctrl-C.
            """
    )

    @Option(help: "The monitor's name (saved in the settings).")
    var name: String?

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "UDP port of the control channel.")
    var port = 48080

    @Option(help: "Address to listen on (default: all interfaces, IPv6 and IPv4).")
    var host = "::"

    @Option(
        help: ArgumentHelp(
            "Where to listen: \(AudioSourceSpec.syntax).",
            discussion: "auto is the system's default microphone; file:PATH loops an audio file in real time; "
                + "test:cry plays a 3 s cry every 10 s (PROTOCOL.md §8).",
            valueName: "source"))
    var audioSource = "auto"

    @Option(
        help: ArgumentHelp(
            "The camera for audio+video streams: \(GStreamerMediaEngine.VideoSource.syntax).",
            discussion: "auto is the default camera (/dev/video0), or the moving test pattern when --audio-source is a "
                + "test: signal; test is the test pattern.",
            valueName: "source"))
    var videoSource = "auto"

    @Flag(help: "Show a pairing QR code at start (valid 5 minutes).")
    var qr = false

    @Option(name: .customLong("qr-png"), help: "Also write the pairing QR code as a PNG image to this file.")
    var qrPNG: String?

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Flag(help: "Do not announce the monitor on the LAN (listeners then need --address and --fingerprint).")
    var noDiscovery = false

    @Option(
        name: .customLong("ice-address"),
        help: "Stream live audio only over this local address (repeatable; default: every interface).")
    var iceAddresses: [String] = []

    func run() async throws {
        let input: any AudioInput
        let source: AudioSourceSpec
        let video: GStreamerMediaEngine.VideoSource?
        do {
            source = try AudioSourceSpec(parsing: audioSource)
            input = try AudioInputs.open(source)
        } catch {
            throw ValidationError(error.message)
        }
        do {
            video = try GStreamerMediaEngine.VideoSource.parse(videoSource)
        } catch {
            throw ValidationError(error.message)
        }
        let directory = data.url
        let identity: DeviceIdentity
        let dtls: DTLSCertificate
        let database: CribCallDatabase
        do {
            let loaded = try DeviceIdentityStore(directory: directory).loadOrCreate()
            identity = loaded.identity
            dtls = loaded.dtls
            database = try CribCallDatabase(directory: directory)
            if let name {
                _ = try database.updateMonitorSettings { $0.monitorName = name }
            }
        } catch {
            throw ValidationError("\(error)")
        }
        let listener: QUICListener
        do {
            listener = try await QUICListener.bind(host: host, port: port, identity: identity)
        } catch {
            throw ValidationError("\(error) — is another monitor running on port \(port)? Choose one with --port.")
        }
        // Live streams (WebRTC through GStreamer) carry the microphone sound detection listens to (one device,
        // shared); without the plugins the monitor still alerts, and says why not.
        let media: (any MediaEngine)?
        do {
            media = try GStreamerMediaEngine(
                configuration: .init(
                    dtlsCertificate: dtls, audioSource: source, audioFeed: input.liveFeed, iceAddresses: iceAddresses,
                    videoSource: video))
        } catch {
            Logger(label: "cribcall monitor").warning("live streaming is off: \(error)")
            media = nil
        }
        let service = try MonitorService(
            identity: identity, database: database, transport: listener,
            mediaEngine: media)
        // On a terminal, `q` shows a fresh pairing QR code (its token valid for 5 minutes).
        let keys =
            json
            ? nil
            : KeyPresses { key in
                if key == UInt8(ascii: "q") || key == UInt8(ascii: "Q") { Task { await service.showQR() } }
            }
        let output = Output(json: json, qrPNG: qrPNG, interactive: keys != nil)
        let printer = Task { for await event in service.events { output.print(event) } }
        let stop = ShutdownSignals { await listener.shutdown() }
        let detection = Task {
            if let failure = await service.detectSound(from: input) {
                Logger(label: "cribcall monitor").warning("\(failure)")
                await listener.shutdown()
            }
        }
        var advertisement: MonitorAdvertisementHandle?
        if !noDiscovery {
            do {
                advertisement = try await service.advertise(using: DNSSDServiceDiscovery())
            } catch {
                Logger(label: "cribcall monitor").warning("not announced on the LAN: \(error)")
            }
        }
        await service.run(showingQR: qr || qrPNG != nil)
        keys?.restore()
        await advertisement?.cancel()
        detection.cancel()
        await printer.value
        _ = stop
    }

    /// Prints monitor events as text or JSON lines. On a terminal, the PIN's validity line counts down every second
    /// until the PIN is used, replaced or expired.
    struct Output: Sendable {
        let json: Bool
        let qrPNG: String?
        /// Keys work (an interactive terminal): say so.
        let interactive: Bool
        private let terminal = TerminalOutput()

        init(json: Bool, qrPNG: String?, interactive: Bool) {
            self.json = json
            self.qrPNG = qrPNG
            self.interactive = interactive
        }

        func print(_ event: MonitorEvent) {
            terminal.stopCountdown()
            if case .qr(_, let text) = event, let qrPNG {
                do {
                    try Data(try QRCodeEncoder.encode(text).png()).write(to: URL(fileURLWithPath: qrPNG))
                } catch {
                    Logger(label: "cribcall monitor").warning("cannot write \(qrPNG): \(error)")
                }
            }
            let line = json ? event.json.canonicalString : event.text(interactive: interactive, qrPNG: qrPNG)
            guard let line else { return }
            terminal.write(line + "\n")
            if !json, case .pin(_, _, let seconds) = event, TerminalOutput.isInteractive {
                terminal.countDown(from: seconds, line: PINDisplay.validity)
            }
        }
    }
}

/// Runs `action` on SIGINT and SIGTERM (swift-service-lifecycle's UnixSignals), for as long as this object lives.
final class ShutdownSignals: Sendable {
    private let task: Task<Void, Never>

    init(_ action: @escaping @Sendable () async -> Void) {
        task = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { await action() }
        }
    }

    deinit {
        task.cancel()
    }
}
