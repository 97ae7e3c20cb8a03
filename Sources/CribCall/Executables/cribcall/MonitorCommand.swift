import ArgumentParser
import CribCallApp

/// `cribcall monitor`: the baby-room device. Argument parsing only; the work is in CribCallApp.
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
            "Where to listen: \(MonitorRequest.audioSourceSyntax).",
            discussion: "auto is the system's default microphone; file:PATH loops an audio file in real time; "
                + "test:cry plays a 3 s cry every 10 s (PROTOCOL.md §8).",
            valueName: "source"))
    var audioSource = "auto"

    @Option(
        help: ArgumentHelp(
            "The camera for audio+video streams: \(MonitorRequest.videoSourceSyntax).",
            discussion: "auto is the default camera (/dev/video0), or the moving test pattern when --audio-source is a "
                + "test: signal; test is the test pattern.",
            valueName: "source"))
    var videoSource = "auto"

    @Flag(
        help: ArgumentHelp(
            "Watch the camera (--video-source) with the safety detectors and send their status and alerts.",
            discussion: "Movement, unusual stillness, a face that may be covered or a baby that may be on its "
                + "stomach (OpenCV's face detector), crying. Not a medical device. Settings: sleepArea, "
                + "safetyAlerts, stillnessMinutes, crySensitivity (`cribcall settings set`)."))
    var safety = false

    @Flag(help: "Show a pairing QR code at start (valid 5 minutes).")
    var qr = false

    @Option(
        name: .customLong("qr-png"),
        help: ArgumentHelp(
            "Also write the pairing QR code as a PNG image to this file.",
            discussion: "Readable by you only (0600); removed once the code is used, expires or is replaced, and "
                + "when the monitor stops. A symbolic link at FILE is refused.",
            valueName: "file"))
    var qrPNG: String?

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Flag(help: "Do not announce the monitor on the LAN (listeners then need --address and --fingerprint).")
    var noDiscovery = false

    @Option(
        name: .customLong("ice-address"),
        help: "Stream live audio only over this local address (repeatable; default: every interface).")
    var iceAddresses: [String] = []

    @Option(
        help: ArgumentHelp(
            "Serve the app for parents (setup, live view, alerts, history, settings) on this loopback port "
                + "(0: any free port).",
            discussion: "It prints the app's address, with a secret that changes every run: only that link opens "
                + "it. Open it in a browser on this machine.",
            valueName: "port"))
    var web: Int?

    func run() async throws {
        var request = MonitorRequest()
        request.name = name
        request.port = port
        request.host = host
        request.audioSource = audioSource
        request.videoSource = videoSource
        request.qr = qr
        request.qrPNG = qrPNG
        request.json = json
        request.noDiscovery = noDiscovery
        request.iceAddresses = iceAddresses
        request.safety = safety
        request.webPort = web
        try await reportingFailures("monitor") { try await request.run(in: data.directory) }
    }
}
