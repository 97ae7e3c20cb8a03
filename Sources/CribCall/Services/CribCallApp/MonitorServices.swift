import AudioCapture
import ControlSocket
import CribCallDiscovery
import CribCallMonitor
import CribCallRuntime
import CribCallWeb
import LocalWebApp
import Logging
import ProgramLifecycle
import QUIC
import ServiceLifecycle
import Synchronization
import VideoCapture

// `cribcall monitor` as swift-service-lifecycle services run by ProgramLifecycle. They start in the order
// `MonitorRequest.Services.parts` lists them and stop in the reverse one — on SIGINT or SIGTERM, or when one of them
// ends or fails — each waiting for the one after it: the protocol first (no new connection, every listener told),
// then the detectors, the LAN announcement, the control socket, the app, and last the output, which prints every
// event until the protocol's stream of them is over, so no line is lost at the end.

/// The monitor's events printed (text or JSON lines) and passed to the app, until the monitor's event stream ends
/// (after ``ProtocolService`` stopped) and this service's own turn to stop has come: the last events are printed.
struct EventOutputService: Service {
    let service: MonitorService
    let output: MonitorRequest.Output
    let app: MonitorWebApp?

    func run() async {
        for await event in service.events {
            output.print(event)
            await app?.observe(event)
        }
        // A service that ended out of its turn would stop the group as failed.
        try? await gracefulShutdown()
        output.finish()
    }
}

/// The app for parents on loopback (the monitor's or a listener's), from the moment it serves until the shutdown:
/// then its pages' event streams end, its address file goes, and the server closes.
struct WebAppService: Service {
    let closeStreams: @Sendable () async -> Void
    let server: LocalWebServer
    let data: CribCallDataDirectory

    func run() async {
        try? await gracefulShutdown()
        await closeStreams()
        AppAddressFile(in: data).remove(ifHolding: server.url)
        await server.close()
    }
}

/// Sound detection on the microphone. A microphone that fails ends the whole monitor with that failure (a monitor
/// that hears nothing must not look alive; the service manager restarts a program that fails).
struct SoundDetectionService: Service {
    let service: MonitorService
    let input: any AudioInput
    let logger: Logger

    /// Why the microphone stopped, in words.
    struct MicrophoneFailed: Error, CustomStringConvertible {
        let description: String
    }

    func run() async throws {
        let (service, input) = (service, input)
        guard let failure = await cancelWhenGracefulShutdown({ await service.detectSound(from: input) }) else { return }
        logger.error("\(failure)")
        throw MicrophoneFailed(description: failure)
    }
}

/// CribAlert's safety detectors on the camera (`--safety`).
struct SafetyWatchService: Service {
    let service: MonitorService
    let camera: VideoCapture

    func run() async {
        let (service, camera) = (service, camera)
        await cancelWhenGracefulShutdown { await service.watchSafety(camera: camera) }
    }
}

/// The control protocol over QUIC (PROTOCOL.md): pairing, alerts, streams. At the shutdown the listener socket
/// closes, every connection is ended, and the monitor's event stream finishes.
struct ProtocolService: Service {
    let service: MonitorService
    let listener: QUICListener
    let showingQR: Bool

    func run() async {
        let listener = listener
        await withGracefulShutdownHandler {
            await service.run(showingQR: showingQR)
        } onGracefulShutdown: {
            Task { await listener.shutdown() }
        }
    }
}

extension MonitorRequest {
    /// What `cribcall monitor` runs, in start order (they stop in the reverse one).
    struct Services {
        var output: EventOutputService
        var web: WebAppService?
        /// The control socket `cribcall alert trigger` and `cribcall camera` reach the monitor through.
        var control: ControlSocketServer?
        /// The monitor's mDNS announcement, withdrawn at its turn.
        var advertisement: ProgramLifecycle.AtShutdown?
        var detection: SoundDetectionService
        var safety: SafetyWatchService?
        var protocolService: ProtocolService

        /// The parts in start order. The protocol's end and the output's stop the monitor; the detectors may end on
        /// their own (a sound file played to its end, a camera's stream over) and the monitor goes on. A failure
        /// anywhere stops it (a failing microphone: exit 1).
        var parts: [ProgramLifecycle.Part] {
            let others: [(any Service)?] = [output, web, control, advertisement]
            return others.compactMap { $0 }.map { ProgramLifecycle.Part($0) }
                + [ProgramLifecycle.Part(detection, endsProgram: false)]
                + (safety.map { [ProgramLifecycle.Part($0, endsProgram: false)] } ?? [])
                + [ProgramLifecycle.Part(protocolService)]
        }
    }
}

/// `cribcall listen`'s following of its monitors, printing and notifying what they say. Stopped by the shutdown
/// signal (``stopped`` then says so), or ends by itself when every monitor refused this listener.
final class ListeningService: Service, Sendable {
    private let listen: @Sendable () async -> Void
    private let stoppedFlag = Mutex(false)

    init(_ listen: @escaping @Sendable () async -> Void) {
        self.listen = listen
    }

    /// The shutdown signal stopped it (not the monitors' refusal).
    var stopped: Bool { stoppedFlag.withLock { $0 } }

    func run() async {
        let listen = listen
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown { await listen() }
        } onGracefulShutdown: {
            self.stoppedFlag.withLock { $0 = true }
        }
    }
}
