import Foundation
import GStreamer
import Synchronization

/// A recording receiver (``GStreamerMediaEngine/ReceiverOutput/record(_:)``).
///
/// - WAV: the audio branch ends in `wavenc ! filesink` (``buildAudioOutput``).
/// - Matroska: `matroskamux ! filesink` is built when the offer arrives, with a request pad for each of its media
///   (the muxer takes no new pad once it has written its header, and video may arrive after audio). Each incoming
///   pad then goes through a `tee`: one branch decodes as always (the `.flowing` probe, the frame count), the other
///   is `queue ! <depayloader> [! h264parse] ! matroskamux`: the media as received, not re-encoded.
///
/// Either way, the end sends EOS through every recording branch (and to muxer pads nothing fed), so the file gets
/// its final sizes and index, and waits (at most 2 s) until the file sink has it.
extension WebRTCPipeline {
    /// A pad feeding a recording (a reference each): webrtcbin's source pad, and the first sink pad of its branch.
    struct RecordingFeed: Sendable {
        let source: Pad
        let branch: Pad
    }

    /// What a receiver records to, once the offer says what it carries.
    struct Recording: Sendable {
        var feeds: [RecordingFeed] = []
        /// Matroska request pads by media kind ("audio", "video") whose branch does not exist yet (references).
        var unfedMuxPads: [String: Pad] = [:]
        var finished = false
    }

    /// How much a recording branch may hold while the muxer waits for the other medium's first buffer: enough
    /// for an hour of Opus, or minutes of video.
    static let recordingQueueBytes = 64 << 20

    /// The files of a recording receiver, if it is one.
    var recordingFiles: RecordingFiles? {
        guard case .receiver(.record(let files)) = role else { return nil }
        return files
    }

    /// Matroska: creates the file and `matroskamux ! filesink` with a pad for each medium of `offer`.
    func prepareRecording(forOffer offer: String) throws(MediaError) {
        guard let files = recordingFiles, files.format == .matroska else { return }
        let kinds = Set(SessionDescriptionText.mediaKinds(in: offer)).intersection(["audio", "video"])
        guard !kinds.isEmpty else { return }
        let url = try files.create(sessionId: sessionId)
        let mux = try Self.make("matroskamux", "recording-mux", in: pipeline)
        let file = try Self.make("filesink", "recording-file", in: pipeline)
        file.set("location", url.path)
        file.set("async", false)
        try Self.link([mux, file], in: pipeline)
        watchEndOfRecording(at: file)
        var pads: [String: Pad] = [:]
        for kind in kinds.sorted() {
            guard let pad = mux.requestPad("\(kind)_%u") else {
                throw MediaError(code: .pipelineFailed, message: "matroskamux gave no \(kind) pad")
            }
            pads[kind] = pad
        }
        file.syncStateWithParent()
        mux.syncStateWithParent()
        state.withLock { $0.recording.unfedMuxPads = pads }
    }

    /// Matroska: puts a `tee` after webrtcbin's `pad` and a recording branch of `kind` on it.
    /// - Returns: The tee's pad for the decoding branch (a reference), or nil when this stream is not recorded
    ///   that way (the caller decodes from `pad` directly).
    func teeIntoRecording(
        _ pad: Pad,
        kind: String,
        codec: GStreamerMediaEngine.VideoCodec? = nil
    ) throws(MediaError) -> Pad? {
        let muxPad = state.withLock { $0.recording.unfedMuxPads.removeValue(forKey: kind) }
        guard let muxPad else { return nil }
        let tee = try Self.make("tee", "recording-tee-\(kind)", in: pipeline)
        let queue = try Self.make("queue", "recording-queue-\(kind)", in: pipeline)
        queue.set("max-size-buffers", parsing: "0")
        queue.set("max-size-time", parsing: "0")
        queue.set("max-size-bytes", parsing: "\(Self.recordingQueueBytes)")
        var chain = [queue]
        switch codec?.resolved {
        case nil:
            chain.append(try Self.make("rtpopusdepay", "recording-depayloader-\(kind)", in: pipeline))
        case .h264:
            chain.append(try Self.make("rtph264depay", "recording-depayloader-\(kind)", in: pipeline))
            chain.append(try Self.make("h264parse", "recording-parser-\(kind)", in: pipeline))
        default:
            chain.append(try Self.make("rtpvp8depay", "recording-depayloader-\(kind)", in: pipeline))
        }
        try Self.link(chain, in: pipeline)
        guard let tail = chain.last?.staticPad("src"), tail.link(to: muxPad) else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link the \(kind) recording")
        }
        guard let recordSource = tee.requestPad("src_%u"), let decodeSource = tee.requestPad("src_%u"),
            let queueSink = queue.staticPad("sink")
        else {
            throw MediaError(code: .pipelineFailed, message: "the \(kind) recording tee has no pads")
        }
        guard recordSource.link(to: queueSink) else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link the \(kind) recording tee")
        }
        for element in chain.reversed() { element.syncStateWithParent() }
        tee.syncStateWithParent()
        guard let teeSink = tee.staticPad("sink") else {
            throw MediaError(code: .pipelineFailed, message: "the \(kind) recording tee has no sink pad")
        }
        guard pad.link(to: teeSink) else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link webrtcbin to the recording")
        }
        let feed = RecordingFeed(source: pad, branch: teeSink)
        state.withLock { $0.recording.feeds.append(feed) }
        return decodeSource
    }

    /// Marks the recording finished when EOS reaches `sink`'s sink pad.
    func watchEndOfRecording(at sink: Element) {
        sink.staticPad("sink")?.addProbe(.downstreamEvents) { [self] data in
            if data.isEndOfStream {
                state.withLock { $0.recording.finished = true }
                wake()
            }
            return .pass
        }
    }

    /// Blocks the pads feeding the recording, sends EOS through each branch (and to muxer pads nothing fed), and
    /// waits (at most 2 s) until the file sink has it.
    func finishRecording() {
        let (feeds, unfed) = state.withLock { ($0.recording.feeds, Array($0.recording.unfedMuxPads.values)) }
        guard !feeds.isEmpty || !unfed.isEmpty else { return }
        for feed in feeds { feed.source.addProbe(.blockDownstream) { _ in .pass } }
        for feed in feeds { feed.branch.sendEndOfStream() }
        for pad in unfed { pad.sendEndOfStream() }
        let deadline = ContinuousClock.now + .seconds(2)
        while !state.withLock({ $0.recording.finished }), ContinuousClock.now < deadline {
            waitForBusMessage(milliseconds: 50)
        }
    }

    /// Releases the recording's pad references (teardown).
    func releaseRecording() {
        state.withLock { $0.recording = Recording() }
    }
}
