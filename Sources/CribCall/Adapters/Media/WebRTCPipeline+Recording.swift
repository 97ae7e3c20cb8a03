import CGStreamer
import Foundation
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
        let source: ObjectReference<GstPad>
        let branch: ObjectReference<GstPad>
    }

    /// What a receiver records to, once the offer says what it carries.
    struct Recording: Sendable {
        var feeds: [RecordingFeed] = []
        /// Matroska request pads by media kind ("audio", "video") whose branch does not exist yet (references).
        var unfedMuxPads: [String: ObjectReference<GstPad>] = [:]
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
        cgst_object_set_string(file, "location", url.path)
        cgst_object_set_bool(file, "async", 0)
        try Self.link([mux, file])
        watchEndOfRecording(at: file)
        var pads: [String: ObjectReference<GstPad>] = [:]
        for kind in kinds.sorted() {
            guard let pad = gst_element_request_pad_simple(mux, "\(kind)_%u") else {
                throw MediaError(code: .pipelineFailed, message: "matroskamux gave no \(kind) pad")
            }
            pads[kind] = ObjectReference(pad)
        }
        gst_element_sync_state_with_parent(file)
        gst_element_sync_state_with_parent(mux)
        state.withLock { $0.recording.unfedMuxPads = pads }
    }

    /// Matroska: puts a `tee` after webrtcbin's `pad` and a recording branch of `kind` on it.
    /// - Returns: The tee's pad for the decoding branch (a reference), or nil when this stream is not recorded
    ///   that way (the caller decodes from `pad` directly).
    func teeIntoRecording(
        _ pad: UnsafeMutablePointer<GstPad>,
        kind: String,
        codec: GStreamerMediaEngine.VideoCodec? = nil
    ) throws(MediaError) -> UnsafeMutablePointer<GstPad>? {
        let muxPad = state.withLock { $0.recording.unfedMuxPads.removeValue(forKey: kind) }
        guard let muxPad else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(muxPad.pointer)) }
        let tee = try Self.make("tee", "recording-tee-\(kind)", in: pipeline)
        let queue = try Self.make("queue", "recording-queue-\(kind)", in: pipeline)
        gst_util_set_object_arg(Self.gobject(queue), "max-size-buffers", "0")
        gst_util_set_object_arg(Self.gobject(queue), "max-size-time", "0")
        gst_util_set_object_arg(Self.gobject(queue), "max-size-bytes", "\(Self.recordingQueueBytes)")
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
        try Self.link(chain)
        guard let last = chain.last, let tail = gst_element_get_static_pad(last, "src"),
            gst_pad_link(tail, muxPad.pointer) == GST_PAD_LINK_OK
        else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link the \(kind) recording")
        }
        gst_object_unref(UnsafeMutableRawPointer(tail))
        guard let recordSource = gst_element_request_pad_simple(tee, "src_%u"),
            let decodeSource = gst_element_request_pad_simple(tee, "src_%u"),
            let queueSink = gst_element_get_static_pad(queue, "sink")
        else {
            throw MediaError(code: .pipelineFailed, message: "the \(kind) recording tee has no pads")
        }
        defer {
            gst_object_unref(UnsafeMutableRawPointer(recordSource))
            gst_object_unref(UnsafeMutableRawPointer(queueSink))
        }
        guard gst_pad_link(recordSource, queueSink) == GST_PAD_LINK_OK else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link the \(kind) recording tee")
        }
        for element in chain.reversed() { gst_element_sync_state_with_parent(element) }
        gst_element_sync_state_with_parent(tee)
        guard let teeSink = gst_element_get_static_pad(tee, "sink") else {
            throw MediaError(code: .pipelineFailed, message: "the \(kind) recording tee has no sink pad")
        }
        guard gst_pad_link(pad, teeSink) == GST_PAD_LINK_OK else {
            gst_object_unref(UnsafeMutableRawPointer(teeSink))
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link webrtcbin to the recording")
        }
        gst_object_ref(UnsafeMutableRawPointer(pad))
        let feed = RecordingFeed(source: ObjectReference(pad), branch: ObjectReference(teeSink))
        state.withLock { $0.recording.feeds.append(feed) }
        return decodeSource
    }

    /// Marks the recording finished when EOS reaches `sink`'s sink pad.
    func watchEndOfRecording(at sink: UnsafeMutablePointer<GstElement>) {
        guard let sinkPad = gst_element_get_static_pad(sink, "sink") else { return }
        gst_pad_add_probe(
            sinkPad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, Self.recordingEvent,
            Unmanaged.passRetained(self).toOpaque(), Self.releaseDestroyNotify
        )
        gst_object_unref(UnsafeMutableRawPointer(sinkPad))
    }

    private static let recordingEvent: GstPadProbeCallback = { _, info, context in
        guard let info, let context, let data = info.pointee.data else { return GST_PAD_PROBE_OK }
        let this = Unmanaged<WebRTCPipeline>.fromOpaque(context).takeUnretainedValue()
        let event = data.assumingMemoryBound(to: GstEvent.self)
        if event.pointee.type == GST_EVENT_EOS {
            this.state.withLock { $0.recording.finished = true }
            this.wake()
        }
        return GST_PAD_PROBE_OK
    }

    /// Blocks the pads feeding the recording, sends EOS through each branch (and to muxer pads nothing fed), and
    /// waits (at most 2 s) until the file sink has it.
    func finishRecording() {
        let (feeds, unfed) = state.withLock { ($0.recording.feeds, Array($0.recording.unfedMuxPads.values)) }
        guard !feeds.isEmpty || !unfed.isEmpty else { return }
        for feed in feeds {
            gst_pad_add_probe(feed.source.pointer, GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM, Self.blockAll, nil, nil)
        }
        for feed in feeds { _ = gst_pad_send_event(feed.branch.pointer, gst_event_new_eos()) }
        for pad in unfed { _ = gst_pad_send_event(pad.pointer, gst_event_new_eos()) }
        let deadline = ContinuousClock.now + .seconds(2)
        while !state.withLock({ $0.recording.finished }), ContinuousClock.now < deadline {
            waitForBusMessage(milliseconds: 50)
        }
    }

    /// Releases the recording's pad references (teardown).
    func releaseRecording() {
        let recording = state.withLock { state in
            defer { state.recording = Recording() }
            return state.recording
        }
        for feed in recording.feeds {
            gst_object_unref(UnsafeMutableRawPointer(feed.source.pointer))
            gst_object_unref(UnsafeMutableRawPointer(feed.branch.pointer))
        }
        for pad in recording.unfedMuxPads.values { gst_object_unref(UnsafeMutableRawPointer(pad.pointer)) }
    }

    private static let blockAll: GstPadProbeCallback = { _, _, _ in GST_PAD_PROBE_OK }
}
