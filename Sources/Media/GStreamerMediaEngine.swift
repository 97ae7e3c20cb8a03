public import AudioCapture
public import CribCallProtocol
public import DeviceIdentity
public import Foundation
public import StreamMedia

/// WebRTC peers on GStreamer 1.22's webrtcbin: Opus senders for the monitor, receivers for the listener
/// (PROTOCOL.md §9). One pipeline per stream.
///
/// ```swift
/// let engine = try GStreamerMediaEngine(configuration: .init(
///     dtlsCertificate: loaded.dtls, audioSource: try AudioSourceSpec(parsing: "pulse"), iceAddresses: ["192.168.1.20"]))
/// let sender = try await engine.makeSender(sessionId: id, mediaType: .audio)
/// for await event in sender.events { … }      // .localDescription (the offer), .localCandidate…, .flowing, .ended
/// ```
///
/// - Both sides use the device's persistent ECDSA P-256 DTLS certificate (aiortc and browsers refuse
///   webrtcbin's default RSA one, which also costs 0.2–0.5 s to generate per stream); the SDP advertises its real
///   SHA-256 fingerprint, and each side checks the remote certificate against the remote SDP's fingerprint.
/// - ICE: host candidates only (no STUN/TURN, no ICE-TCP), optionally only on ``Configuration/iceAddresses``.
public final class GStreamerMediaEngine: MediaEngine {
    /// What a receiver does with the decoded audio.
    public enum ReceiverOutput: Sendable, Hashable {
        /// Plays it on the default output (`autoaudiosink`).
        case play
        /// Writes it to `<directory>/<sessionId>.wav` (16-bit mono 48 kHz; characters other than letters,
        /// digits, `-` and `_` in the session id become `_`). The file is complete once the peer has ended.
        case record(directory: URL)
        /// Decodes and drops it (tests, benchmarks).
        case discard
    }

    /// How the engine builds its pipelines.
    public struct Configuration: Sendable {
        /// The device's DTLS certificate (from `DeviceIdentityStore`): used by every peer.
        public var dtlsCertificate: DTLSCertificate
        /// Where a sender's audio comes from. `test:cry` is a live 440 Hz tone, `test:silence` live silence.
        public var audioSource: AudioSourceSpec
        /// The local addresses to gather ICE host candidates on (`--ice-address`); empty: every interface except
        /// loopback (libnice's default). Give `127.0.0.1` to stream over loopback.
        public var iceAddresses: [String]
        /// The jitter buffer of webrtcbin (its default, 200 ms, is most of the delay on a LAN).
        public var jitterBufferLatency: Duration
        /// The Opus bitrate in bits per second (24 000–32 000 suits a baby monitor).
        public var opusBitrate: Int
        /// What receivers do with the audio.
        public var receiverOutput: ReceiverOutput

        public init(
            dtlsCertificate: DTLSCertificate,
            audioSource: AudioSourceSpec = .auto,
            iceAddresses: [String] = [],
            jitterBufferLatency: Duration = .milliseconds(50),
            opusBitrate: Int = 28_000,
            receiverOutput: ReceiverOutput = .play
        ) {
            self.dtlsCertificate = dtlsCertificate
            self.audioSource = audioSource
            self.iceAddresses = iceAddresses
            self.jitterBufferLatency = jitterBufferLatency
            self.opusBitrate = opusBitrate
            self.receiverOutput = receiverOutput
        }
    }

    /// How the engine builds its pipelines.
    public let configuration: Configuration

    /// Checks that GStreamer and every element the peers need are installed.
    ///
    /// - Throws: ``MediaError`` with code ``MediaError/Code/missingPlugin`` naming the Debian packages to
    ///   install, or ``MediaError/Code/gstreamerUnavailable``.
    public init(configuration: Configuration) throws(MediaError) {
        try MediaRuntime.initialize()
        try MediaRuntime.requireElements(
            WebRTCPipeline.commonElements
                + WebRTCPipeline.senderElements(for: configuration.audioSource)
                + WebRTCPipeline.receiverElements(for: configuration.receiverOutput)
        )
        self.configuration = configuration
    }

    /// A sender that starts at once: its first event is the offer (`.localDescription`).
    ///
    /// - Parameters:
    ///   - sessionId: The stream's session id (used in names and logs only).
    ///   - mediaType: `.audio`; `.audioVideo` streams audio only for now (the offer has no video section).
    /// - Throws: ``MediaError`` if the pipeline cannot start (e.g. the audio input cannot be opened).
    public func makeSender(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        try await GStreamerMediaPeer.start(
            WebRTCPipeline.Role.sender(configuration.audioSource),
            sessionId: sessionId,
            configuration: configuration
        )
    }

    /// A receiver: give it the offer with ``MediaPeer/setRemoteDescription(sdp:)``; its answer follows as
    /// `.localDescription`, and `.flowing` at the first decoded audio frame.
    ///
    /// - Throws: ``MediaError`` if the pipeline cannot start.
    public func makeReceiver(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        try await GStreamerMediaPeer.start(
            WebRTCPipeline.Role.receiver(configuration.receiverOutput),
            sessionId: sessionId,
            configuration: configuration
        )
    }

    /// Where ``ReceiverOutput/record(directory:)`` writes the audio of a session.
    public static func recordingURL(directory: URL, sessionId: String) -> URL {
        let safe = String(
            sessionId.unicodeScalars.map { scalar -> Character in
                let allowed = scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_")
                return allowed ? Character(scalar) : "_"
            }
        )
        return directory.appendingPathComponent((safe.isEmpty ? "stream" : safe) + ".wav")
    }
}
