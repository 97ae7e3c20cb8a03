import ArgumentParser
import AudioCapture
import CanonicalJSON
import CribCallDiscovery
import CribCallMonitor
import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import Media
import QRCode
import QUIC
import ServiceDiscovery
import SoundDetection
import StreamMedia
import Synchronization
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
            FileHandle.standardError.write(Data("cribcall monitor: live streaming is off: \(error)\n".utf8))
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
            do {
                try await DetectionLoop.run(input: input, configuration: { await service.detectorConfiguration }) {
                    _ = try? await service.reportNoise($0)
                }
            } catch is CancellationError {
            } catch let error as AudioCaptureError {
                // Without audio the monitor would watch over nothing: say so and stop, rather than look alive.
                FileHandle.standardError.write(Data("cribcall monitor: audio stopped: \(error.message)\n".utf8))
                await listener.shutdown()
            } catch {
                FileHandle.standardError.write(Data("cribcall monitor: sound detection stopped: \(error)\n".utf8))
                await listener.shutdown()
            }
        }
        var advertisement: MonitorAdvertisementHandle?
        if !noDiscovery {
            do {
                advertisement = try await service.advertise(using: DNSSDServiceDiscovery())
            } catch {
                FileHandle.standardError.write(Data("cribcall monitor: not announced on the LAN: \(error)\n".utf8))
            }
        }
        await service.run(showingQR: qr || qrPNG != nil)
        keys?.restore()
        await advertisement?.cancel()
        detection.cancel()
        await printer.value
        _ = stop
    }

    /// Prints monitor events as text or JSON lines, flushing each line. On a terminal, the PIN's validity line
    /// counts down every second until the PIN is used, replaced or expired.
    struct Output: Sendable {
        let json: Bool
        let qrPNG: String?
        /// Keys work (an interactive terminal): say so.
        let interactive: Bool
        private let countdown = Countdown()

        init(json: Bool, qrPNG: String?, interactive: Bool) {
            self.json = json
            self.qrPNG = qrPNG
            self.interactive = interactive
        }

        func print(_ event: MonitorEvent) {
            countdown.stop()
            if case .qr(_, let text) = event, let qrPNG {
                do {
                    try Data(try QRCodeEncoder.encode(text).png()).write(to: URL(fileURLWithPath: qrPNG))
                } catch {
                    FileHandle.standardError.write(Data("cribcall monitor: cannot write \(qrPNG): \(error)\n".utf8))
                }
            }
            let line = json ? event.json.canonicalString : text(event)
            guard let line else { return }
            countdown.write(line + "\n")
            if !json, case .pin(_, _, let seconds) = event, isatty(STDOUT_FILENO) == 1 {
                countdown.start(seconds: seconds)
            }
        }

        func text(_ event: MonitorEvent) -> String? {
            switch event {
            case .ready(_, let name, let fingerprint, let port):
                return "Monitor \"\(name)\" is listening on UDP port \(port).\n"
                    + "  Certificate fingerprint: \(fingerprint)\n"
                    + "  Listeners pair with: cribcall pair --pin --address HOST:\(port) --fingerprint \(fingerprint)"
                    + (interactive ? "\n  Press q to show a pairing QR code; Ctrl-C stops the monitor." : "")
            case .qr(_, let text):
                let picture = (try? QRCodeEncoder.encode(text).terminalText()) ?? ""
                return "Pairing QR code (valid 5 minutes) — scan it, or pass its text to `cribcall pair --qr`:\n"
                    + picture + "\n  \(text)" + (qrPNG.map { "\n  (also written to \($0))" } ?? "")
            case .pin(let pin, _, let seconds):
                return PINDisplay.render(pin, expiresInSec: seconds)
            case .pinHidden:
                return "  (the PIN is no longer valid)"
            case .paired(_, let name, _, let method):
                return "Paired \"\(name)\" by \(method == "qr" ? "QR code" : "PIN")."
            case .pairingFailed(let reason):
                return "Pairing failed: \(reason)."
            case .noise(let seq, _, let peak, _):
                return "Noise #\(seq): peak level \(peak) — alert sent to connected listeners."
            case .listenerConnected(let fingerprint, let id, let trusted):
                return trusted
                    ? "Listener \(id ?? fingerprint) connected." : "An unpaired device connected (pairing only)."
            case .listenerDisconnected(let fingerprint, let id, _):
                return "Listener \(id ?? fingerprint) disconnected."
            case .listenerRevoked(let id):
                return "Listener \(id) was revoked and disconnected."
            case .settingsChanged(let settings):
                return "Settings now in force: name \"\(settings.monitorName)\", threshold \(settings.threshold), "
                    + "minimum \(settings.minDurationMs) ms, cooldown \(settings.cooldownSec) s."
            case .streamStarted(_, let listenerId, let mediaType, let automatic):
                return "Streaming \(mediaType.displayName) to listener \(listenerId)"
                    + (automatic ? " (automatic, after noise)." : ".")
            case .streamEnded(let sessionId, let reason):
                return "Stream \(sessionId.prefix(8)) ended (\(reason))."
            }
        }
    }
}

/// Rewrites the PIN's validity line once a second (cursor up, clear line), serialising every write to stdout so
/// the countdown and the event lines never interleave.
final class Countdown: Sendable {
    private let state = Mutex<Task<Void, Never>?>(nil)
    private let output = Mutex(())

    func write(_ text: String) {
        output.withLock { _ in FileHandle.standardOutput.write(Data(text.utf8)) }
    }

    /// Replaces the last line, unless the countdown was stopped: checked under the output lock, so a line
    /// printed after `stop()` is never the one erased.
    private func rewriteLastLine(_ line: String) {
        output.withLock { _ in
            guard !Task.isCancelled else { return }
            FileHandle.standardOutput.write(Data(("\u{1B}[1A\r\u{1B}[2K" + line + "\n").utf8))
        }
    }

    func start(seconds: Int) {
        let task = Task { [weak self] in
            for remaining in stride(from: seconds - 1, through: 0, by: -1) {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
                self?.rewriteLastLine(PINDisplay.validity(remaining))
            }
        }
        state.withLock { $0 = task }
    }

    func stop() {
        state.withLock { task in
            task?.cancel()
            task = nil
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
