public import Foundation
import GStreamer
import Synchronization

extension ToukanRecorder {
    /// The element factories ``recover(_:to:)`` needs.
    static let recoveryElements = ["filesrc", "qtdemux", "aacparse", "mp4mux", "filesink"]

    /// Finalises a recording left by a recorder that did not stop (killed, a power cut, a full disk) into a normal
    /// .m4a: `filesrc ! qtdemux ! aacparse ! mp4mux ! filesink`. Every complete fragment is kept; of a truncated
    /// last fragment, the samples whose bytes are all on disk are kept and the rest is dropped (qtdemux stops at the
    /// cut). Works on a finished recording too (a plain remux).
    ///
    /// - Parameters:
    ///   - partial: The fragmented file as it was left. It is not changed.
    ///   - output: The new file (must not exist).
    /// - Returns: The duration of the audio recovered.
    /// - Throws: ``RecorderError/Code/unrecoverable`` if no audio could be read back (nothing is left at
    ///   `output` then), ``RecorderError/Code/outputExists``, ``RecorderError/Code/missingDependency``.
    public static func recover(_ partial: URL, to output: URL) async throws(RecorderError) -> Duration {
        guard !FileManager.default.fileExists(atPath: output.path) else {
            throw RecorderError(
                code: .outputExists, message: "\(output.path) exists already: recover into a new file")
        }
        // Created owner-only before GStreamer opens it, like every recording.
        guard FileManager.default.createFile(atPath: output.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw RecorderError(code: .outputUnwritable, message: "cannot create \(output.path)")
        }
        do {
            return try await offThePool { () throws(RecorderError) in try remux(partial, to: output) }
        } catch {
            try? FileManager.default.removeItem(at: output)
            throw error
        }
    }

    /// The duration of the audio in a recording (finished or partial), read to its end without writing anything:
    /// what a file found on disk without a ledger row is recorded with.
    /// - Throws: ``RecorderError/Code/unrecoverable`` if it holds no readable audio.
    public static func measure(_ file: URL) async throws(RecorderError) -> Duration {
        try await offThePool { () throws(RecorderError) in try remux(file, to: nil) }
    }

    /// Reads `partial` to its end and, with an `output`, writes what it holds there as a normal .m4a.
    private static func remux(_ partial: URL, to output: URL?) throws(RecorderError) -> Duration {
        let end = RecoveredEnd()
        let failure: GStreamerFailure?
        do {
            failure = try remuxPipeline(partial, to: output, end: end).playToEnd(timeout: .seconds(600))
        } catch {
            throw RecorderError(error)
        }
        let duration = end.value.withLock { $0 }
        guard failure == nil, duration > .zero else {
            if let output { try? FileManager.default.removeItem(at: output) }
            let why = failure.map { " (\($0.reason))" } ?? " (it holds no complete fragment)"
            throw RecorderError(
                code: .unrecoverable,
                message: "no audio could be recovered from \(partial.path)\(why): it was left before its first "
                    + "fragment was written, or it is not a recording"
            )
        }
        return duration
    }

    /// The remuxing pipeline (without an output, the parsed frames end in a fakesink); `end` follows the end of
    /// the last AAC frame that reached the muxer.
    private static func remuxPipeline(
        _ partial: URL,
        to output: URL?,
        end: RecoveredEnd
    ) throws(GStreamerError) -> Pipeline {
        try GStreamer.requireElements(recoveryElements + ["fakesink"])
        let pipeline = try Pipeline(name: "recorder-recovery")
        let source = try pipeline.make("filesrc", name: "partial")
        source.set("location", partial.path)
        let demuxer = try pipeline.make("qtdemux", name: "demuxer")
        let parser = try pipeline.make("aacparse", name: "parser")
        try pipeline.link(source, demuxer)
        if let output {
            let muxer = try pipeline.make("mp4mux", name: "muxer")
            let sink = try pipeline.make("filesink", name: "sink")
            sink.set("location", output.path)
            try pipeline.link([parser, muxer, sink])
        } else {
            let sink = try pipeline.make("fakesink", name: "sink")
            sink.set("sync", false)
            try pipeline.link(parser, sink)
        }
        let parserInput = parser.staticPad("sink")
        demuxer.onPadAdded { pad in
            guard pad.mediaType?.hasPrefix("audio/") == true, let parserInput, !parserInput.isLinked else { return }
            _ = pad.link(to: parserInput)
        }
        parser.staticPad("src")?.addProbe(.buffers) { data in
            if let start = data.presentationTime {
                let stop = start + (data.duration ?? .zero)
                end.value.withLock { $0 = max($0, stop) }
            }
            return .pass
        }
        return pipeline
    }
}

/// The end of the last frame the recovery's muxer received, written on the streaming thread.
private final class RecoveredEnd: Sendable {
    let value = Mutex<Duration>(.zero)
}
