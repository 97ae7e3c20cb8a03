import ArgumentParser
import CribCallApp
import Foundation

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

    @Option(help: "Open a live stream from this monitor (id, id prefix or name) once connected.")
    var open: String?

    @Flag(help: "With --open (or the v key): audio and video instead of audio only.")
    var video = false

    @Option(
        help: ArgumentHelp(
            "Record streams instead of playing them: FILE.wav (audio), FILE.mkv (audio and video as received), or a "
                + "directory (one WAV per stream). Further streams go to FILE-2, FILE-3…; no file is overwritten.",
            valueName: "file"))
    var record: String?

    @Option(
        name: .customLong("ice-address"),
        help: "Receive live streams only over this local address (repeatable; default: every interface).")
    var iceAddresses: [String] = []

    @Option(
        name: .customLong("on-noise"),
        help: ArgumentHelp(
            "What a noise alert does from now on: notify (default) or open (play the monitor's sound: its automatic "
                + "stream, or one this listener asks for when the monitor sends none)."))
    var onNoise: String?

    @Option(
        help: ArgumentHelp(
            "Serve the app for parents (monitors, alerts and their actions, pairing, live view) on this loopback "
                + "port (0: any free port).",
            discussion: "Streams opened from the app play in the page; with no page open they play here as before.",
            valueName: "port"))
    var web: Int?

    func run() async throws {
        var request = ListenRequest(name: name)
        request.json = json
        request.noNotify = noNotify
        request.open = open
        request.video = video
        request.record = record
        request.iceAddresses = iceAddresses
        request.onNoise = onNoise
        request.webPort = web
        try await reportingFailures("listen") { try await request.run(in: data.directory) }
    }
}
