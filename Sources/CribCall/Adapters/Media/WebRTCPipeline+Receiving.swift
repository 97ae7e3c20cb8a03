import Foundation
import GStreamer
import Synchronization

/// A receiver's side of a peer: each incoming pad of webrtcbin gets its decoding branch (audio to the output, video
/// in WebRTCPipeline+Video.swift, anything else to a fakesink), teed into a recording when there is one.
extension WebRTCPipeline {
    /// A receiver's incoming stream: decodes audio to the output, drops anything else.
    func padAdded(_ pad: Pad) {
        guard case .receiver(let output) = role, pad.isSource else { return }
        do throws(MediaError) {
            if Self.isCaps(of: pad, prefix: "audio/"),
                state.withLock({ state in
                    defer { state.decodingAudio = true }
                    return !state.decodingAudio
                })
            {
                if let branch = try teeIntoRecording(pad, kind: "audio") {
                    try buildAudioOutput(.discard, from: branch)
                } else {
                    try buildAudioOutput(output, from: pad)
                }
            } else if let codec = Self.decodableVideoCodec(of: pad),
                state.withLock({ state in
                    defer { state.decodingVideo = true }
                    return !state.decodingVideo
                })
            {
                if let branch = try teeIntoRecording(pad, kind: "video", codec: codec) {
                    try buildVideoOutput(output, codec: codec, from: branch)
                } else {
                    try buildVideoOutput(output, codec: codec, from: pad)
                }
            } else {
                let sink = try Self.make("fakesink", nil, in: pipeline)
                sink.set("async", false)
                sink.syncStateWithParent()
                if let target = sink.staticPad("sink") { _ = pad.link(to: target) }
            }
        } catch {
            end(error.message)
        }
    }

    private func buildAudioOutput(_ output: GStreamerMediaEngine.ReceiverOutput, from pad: Pad) throws(MediaError) {
        var chain = [
            try Self.make("rtpopusdepay", "depayloader", in: pipeline),
            try Self.make("opusdec", "decoder", in: pipeline),
            try Self.make("audioconvert", "convert", in: pipeline),
            try Self.make("audioresample", "resample", in: pipeline),
        ]
        chain[1].set("use-inband-fec", parsing: "true")
        var sinkForEOS: Element?
        switch output {
        case .play:
            chain.append(try Self.make("autoaudiosink", "output", in: pipeline))
        case .record(let files) where files.format == .wav:
            let caps = try Self.make("capsfilter", "output-caps", in: pipeline)
            caps.set("caps", parsing: "audio/x-raw,format=S16LE,rate=48000,channels=1")
            let encoder = try Self.make("wavenc", "output-encoder", in: pipeline)
            let file = try Self.make("filesink", "output", in: pipeline)
            file.set("location", try files.create(sessionId: sessionId).path)
            file.set("async", false)
            chain += [caps, encoder, file]
            sinkForEOS = file
        case .record, .discard, .pictures:  // a Matroska recording records the audio before it is decoded
            let sink = try Self.make("fakesink", "output", in: pipeline)
            sink.set("async", false)
            chain.append(sink)
        case .samples(let handler):
            let caps = try Self.make("capsfilter", "output-caps", in: pipeline)
            caps.set(
                "caps",
                parsing: GStreamer.monoFloatCaps(rate: 48_000)
            )
            let sink = try Self.make("appsink", "output", in: pipeline)
            sink.set("async", false)
            // Synchronised like a speaker: each buffer comes out when it is due, pipeline latency included.
            sink.configureAppSink(caps: nil, sync: true) { sample in
                let renderedAt = ContinuousClock.now
                if let samples = sample.floats() { handler.handle(samples, renderedAt) }
                return .ok
            }
            chain += [caps, sink]
        }
        try Self.link(chain, in: pipeline)
        // First decoded buffer → `.flowing`.
        chain[1].staticPad("src")?.addProbe(.buffers) { [self] _ in
            signal { $0.decodedFirstAudio() }
            return .remove
        }
        if let sinkForEOS { watchEndOfRecording(at: sinkForEOS) }
        for element in chain.reversed() { element.syncStateWithParent() }
        guard let head = chain[0].staticPad("sink") else {
            throw MediaError(code: .pipelineFailed, message: "the Opus depayloader has no sink pad")
        }
        guard pad.link(to: head) else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link webrtcbin to the Opus decoder")
        }
        if sinkForEOS != nil {
            let feed = RecordingFeed(source: pad, branch: head)
            state.withLock { $0.recording.feeds.append(feed) }
        }
    }
}
