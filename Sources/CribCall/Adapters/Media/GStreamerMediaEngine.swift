public import AudioCapture
public import CribCallProtocol
public import DeviceIdentity
public import Logging
public import StreamMedia
public import VideoCapture

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
        /// Records each stream to a file of ``RecordingFiles`` (WAV audio, or Matroska audio and video as
        /// received). A file is complete once its peer has ended.
        case record(RecordingFiles)
        /// Decodes and drops it (tests, benchmarks).
        case discard
        /// Hands the decoded audio (48 kHz mono `Float`) to a handler at the moment a speaker would play it: the
        /// buffers are released in time, after the jitter buffer, like `autoaudiosink` (level meters, latency
        /// measurements).
        case samples(DecodedAudioHandler)
        /// Hands the decoded video to a handler as JPEG pictures, at most two a second, and drops the audio (a hub
        /// that takes snapshots from a monitor's stream).
        case pictures(DecodedPictureHandler)
    }

    /// Receives a receiver's video as JPEG pictures (``ReceiverOutput/pictures(_:)``). Equal only to itself.
    public final class DecodedPictureHandler: Sendable, Hashable {
        let handle: @Sendable (_ picture: DecodedPicture) -> Void

        /// - Parameter handle: Called on a GStreamer thread for each picture; it must return quickly.
        public init(_ handle: @escaping @Sendable (_ picture: DecodedPicture) -> Void) {
            self.handle = handle
        }

        public static func == (lhs: DecodedPictureHandler, rhs: DecodedPictureHandler) -> Bool { lhs === rhs }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    /// One picture of a received stream.
    public struct DecodedPicture: Sendable {
        /// The stream it belongs to.
        public var sessionId: String
        /// The picture, JPEG-encoded at the stream's size.
        public var jpeg: [UInt8]
        public var width: Int
        public var height: Int
    }

    /// Receives a receiver's decoded audio (``ReceiverOutput/samples(_:)``). Equal only to itself.
    public final class DecodedAudioHandler: Sendable, Hashable {
        let handle: @Sendable (_ samples: [Float], _ renderedAt: ContinuousClock.Instant) -> Void

        /// - Parameter handle: Called on a GStreamer thread for each decoded buffer (typically 20 ms), with the
        ///   moment its first sample is due at the speaker; it must return quickly.
        public init(_ handle: @escaping @Sendable (_ samples: [Float], _ renderedAt: ContinuousClock.Instant) -> Void) {
            self.handle = handle
        }

        public static func == (lhs: DecodedAudioHandler, rhs: DecodedAudioHandler) -> Bool { lhs === rhs }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    /// Where an `audio_video` sender's video comes from.
    public enum VideoSource: Sendable, Hashable {
        /// A live moving ball (`videotestsrc pattern=ball`).
        case test
        /// A Video4Linux2 camera; `nil` for `/dev/video0`.
        case v4l2(device: String?)
    }

    /// The size and rate of the video an `audio_video` sender encodes.
    public struct VideoFormat: Sendable, Hashable {
        public var width: Int
        public var height: Int
        public var framesPerSecond: Int

        public init(width: Int, height: Int, framesPerSecond: Int) {
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }

        /// 1280x720 at 30 fps (the target; VP8 realtime costs about half a core here).
        public static let hd720 = VideoFormat(width: 1280, height: 720, framesPerSecond: 30)
        /// 640x360 at 30 fps.
        public static let sd360 = VideoFormat(width: 640, height: 360, framesPerSecond: 30)
    }

    /// How the engine builds its pipelines.
    public struct Configuration: Sendable {
        /// The device's DTLS certificate (from `DeviceIdentityStore`): used by every peer.
        public var dtlsCertificate: DTLSCertificate
        /// Where a sender's audio comes from when there is no ``audioFeed``. `test:cry` is a live 440 Hz tone,
        /// `test:silence` live silence.
        public var audioSource: AudioSourceSpec
        /// The shared microphone (the monitor's ``AudioCapture/AudioInput/liveFeed``): when set, senders stream
        /// exactly what sound detection hears instead of opening ``audioSource`` again.
        public var audioFeed: LiveAudioFeed?
        /// The local addresses to gather ICE host candidates on (`--ice-address`); empty: every interface except
        /// loopback (libnice's default). Give `127.0.0.1` to stream over loopback.
        public var iceAddresses: [String]
        /// The jitter buffer of webrtcbin (its default, 200 ms, is most of the delay on a LAN).
        public var jitterBufferLatency: Duration
        /// The Opus bitrate in bits per second (24 000–32 000 suits a baby monitor).
        public var opusBitrate: Int
        /// What receivers do with the audio. Decoded video is shown (`autovideosink`) only with ``ReceiverOutput/play``
        /// and a display (`DISPLAY` or `WAYLAND_DISPLAY` set); otherwise it is counted and dropped.
        public var receiverOutput: ReceiverOutput
        /// Where `audio_video` senders take their video when there is no ``videoFeed``; nil: ``VideoSource/test``
        /// for a `test:*` audio source, ``VideoSource/v4l2(device:)`` (default camera) otherwise.
        public var videoSource: VideoSource?
        /// The shared camera (the safety detectors' ``VideoCapture/liveFeed``): when set, `audio_video` senders
        /// stream what the detectors watch instead of opening ``videoSource`` (a camera cannot be opened twice).
        public var videoFeed: LiveVideoFeed?
        /// The size and rate `audio_video` senders encode.
        public var videoFormat: VideoFormat
        /// The video encoder's target bitrate in bits per second (halved, with 480p video, on a weak link).
        public var videoBitrate: Int
        /// The codec `audio_video` senders encode with: H.264 when installed, else VP8 (``VideoCodec/automatic``).
        public var videoCodec: VideoCodec = .automatic
        /// Where each peer says how its stream goes (debug: started, connected and verified, ended and why), with
        /// `session` in its metadata. The program's logger.
        public var logger = Logger(label: "cribcall")
        /// Test-only: the share (0…1) of incoming video RTP packets a receiver drops before its RTP session, so that
        /// it reports a lossy link to the sender.
        var simulatedIncomingVideoLoss: Double = 0
        /// Test-only: told the video size a sender sends (and each switch) and the sizes and frames a receiver decodes.
        var videoObserver: VideoObserver?

        public init(
            dtlsCertificate: DTLSCertificate,
            audioSource: AudioSourceSpec = .auto,
            audioFeed: LiveAudioFeed? = nil,
            iceAddresses: [String] = [],
            jitterBufferLatency: Duration = .milliseconds(50),
            opusBitrate: Int = 28_000,
            receiverOutput: ReceiverOutput = .play,
            videoSource: VideoSource? = nil,
            videoFormat: VideoFormat = .hd720,
            videoBitrate: Int = 500_000
        ) {
            self.dtlsCertificate = dtlsCertificate
            self.audioSource = audioSource
            self.audioFeed = audioFeed
            self.iceAddresses = iceAddresses
            self.jitterBufferLatency = jitterBufferLatency
            self.opusBitrate = opusBitrate
            self.receiverOutput = receiverOutput
            self.videoSource = videoSource
            self.videoFormat = videoFormat
            self.videoBitrate = videoBitrate
        }

        /// Where senders take their audio.
        var senderAudio: WebRTCPipeline.SenderAudio {
            audioFeed.map { .feed($0) } ?? .source(audioSource)
        }

        /// Where `audio_video` senders take their video.
        var senderVideo: WebRTCPipeline.SenderVideo {
            videoFeed.map { .feed($0) } ?? .source(effectiveVideoSource)
        }

        /// The video source `audio_video` senders use when there is no ``videoFeed``.
        public var effectiveVideoSource: VideoSource {
            if let videoSource { return videoSource }
            if case .test = audioSource { return .test }
            return .v4l2(device: nil)
        }
    }

    /// How the engine builds its pipelines.
    public let configuration: Configuration

    /// Checks that GStreamer and every element the peers need are installed.
    ///
    /// - Throws: ``MediaError`` with code ``MediaError/Code/missingPlugin`` naming the Debian packages to
    ///   install, or ``MediaError/Code/gstreamerUnavailable``.
    public init(configuration: Configuration) throws(MediaError) {
        try MediaError.requireGStreamer()
        try MediaError.requireGStreamer(
            WebRTCPipeline.commonElements
                + WebRTCPipeline.senderElements(for: configuration.senderAudio)
                + WebRTCPipeline.receiverElements(for: configuration.receiverOutput)
        )
        self.configuration = configuration
    }

    /// A sender that starts at once: its first event is the offer (`.localDescription`).
    ///
    /// - Parameters:
    ///   - sessionId: The stream's session id (used in names and logs only).
    ///   - mediaType: `.audio`, or `.audioVideo`: a second m-line with H.264 (payload type 102) or VP8 (96), after
    ///     ``Configuration/videoCodec``, from ``Configuration/effectiveVideoSource`` at ``Configuration/videoFormat``.
    /// - Throws: ``MediaError`` if the pipeline cannot start (e.g. the audio input cannot be opened), or
    ///   ``MediaError/Code/missingPlugin`` if a video element is not installed.
    public func makeSender(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        var video: WebRTCPipeline.SenderVideo?
        if mediaType == .audioVideo {
            video = configuration.senderVideo
            try MediaError.requireGStreamer(
                WebRTCPipeline.videoSenderElements(for: configuration.senderVideo, codec: configuration.videoCodec)
            )
        }
        return try await GStreamerMediaPeer.start(
            WebRTCPipeline.Role.sender(configuration.senderAudio, video: video),
            sessionId: sessionId,
            configuration: configuration
        )
    }

    /// A receiver: give it the offer with ``MediaPeer/setRemoteDescription(sdp:)``; its answer follows as
    /// `.localDescription`, and `.flowing` at the first decoded audio frame. If the offer has video (whatever
    /// `mediaType` says) it is decoded too (H.264 or VP8), when that codec's elements are installed.
    ///
    /// - Throws: ``MediaError`` if the pipeline cannot start.
    public func makeReceiver(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        try await GStreamerMediaPeer.start(
            WebRTCPipeline.Role.receiver(configuration.receiverOutput),
            sessionId: sessionId,
            configuration: configuration
        )
    }
}
