public import Foundation
import GStreamer
import Synchronization
public import ToukanCore

/// What the server's worker learns from an uploaded file.
public struct AudioAnalysis: Sendable, Hashable {
    /// Seconds of decoded audio.
    public var duration: Double
    /// Integrated loudness in LUFS (BS.1770 on the mono downmix); −∞ for silence.
    public var loudness: Double
    /// PocketSphinx's hypotheses joined by spaces (empty when it heard no words); nil when not transcribed.
    public var transcript: String?

    public init(duration: Double, loudness: Double, transcript: String?) {
        self.duration = duration
        self.loudness = loudness
        self.transcript = transcript
    }
}

/// Why a file could not be analysed; the message is stored on the failed memory for people to read.
public struct AudioAnalysisError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Decodes an audio file once with GStreamer and measures it on the way:
/// ```
/// filesrc ! decodebin ! audioconvert ! audioresample ! audio/x-raw,format=F32LE,rate=48000,channels=1
///   (a buffer probe feeds the duration and the LoudnessMeter)
///   ! audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=16000,channels=1
///   ! pocketsphinx ! fakesink   (a probe on pocketsphinx's source pad reads its text buffers)
/// ```
/// One chain, no tee: with a tee in front of it, pocketsphinx (Debian 0.8+5prealpha) recognised nothing.
/// Elements are made one by one (no pipeline text is parsed). PocketSphinx (Debian `gstreamer1.0-pocketsphinx`,
/// `pocketsphinx-en-us`) pushes each utterance's final hypothesis as a `text/plain` buffer on its source pad, read
/// here with a probe, so the adapter needs nothing beyond the GStreamer adapter's public API.
public enum AudioAnalyzer {
    /// The rate the loudness is measured at.
    public static let analysisRate = 48_000
    static let decodeElements = ["filesrc", "decodebin", "audioconvert", "audioresample", "capsfilter", "fakesink"]
    static let transcriptionElements = ["pocketsphinx"]

    /// Little-endian 32-bit floats from bytes (a trailing partial sample is ignored).
    static func floats(littleEndian bytes: [UInt8]) -> [Float] {
        stride(from: 0, to: bytes.count - 3, by: 4).map { index in
            Float(
                bitPattern: UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
                    | UInt32(bytes[index + 3]) << 24)
        }
    }

    /// Whether PocketSphinx is installed (else transcripts are skipped and the README's packages are missing).
    public static var canTranscribe: Bool {
        (try? GStreamer.initialize()) != nil && GStreamer.missingElements(transcriptionElements) == nil
    }

    /// Analyses the file at `path` on the process's ``PipelineRunner`` (never a concurrency-pool thread, never a
    /// thread of its own).
    /// - Parameters:
    ///   - transcribe: Run PocketSphinx (slower than the decode: about real time / 5 on one core).
    ///   - timeout: Longest the decode may take.
    /// - Throws: ``AudioAnalysisError`` naming what failed (missing plugin, not decodable, no audio stream).
    public static func analyze(path: String, transcribe: Bool, timeout: Duration = .seconds(3_600)) async throws
        -> AudioAnalysis
    {
        try await PipelineRunner.shared.run {
            try analyzeBlocking(path: path, transcribe: transcribe, timeout: timeout)
        }
    }

    private static let noAudioMessage = "toukan-analysis-no-audio"

    /// How long a decode may go without producing audio before it counts as stuck.
    static let stallLimit: Duration = .seconds(15)

    /// State shared with the streaming threads.
    private final class Run: Sendable {
        struct State {
            var meter = LoudnessMeter(sampleRate: AudioAnalyzer.analysisRate)
            var text: [String] = []
            var linkedAudio = false
            /// When audio last came out of the decoder (or the run started).
            var lastProgress = ContinuousClock.now
        }

        let state = Mutex(State())
    }

    static func analyzeBlocking(path: String, transcribe: Bool, timeout: Duration) throws -> AudioAnalysis {
        do {
            try GStreamer.initialize()
        } catch {
            throw AudioAnalysisError("GStreamer is unavailable: \(error.message)")
        }
        let needed = decodeElements + (transcribe ? transcriptionElements : [])
        if let missing = GStreamer.missingElements(needed) {
            let packages = missing.elements.contains("pocketsphinx") ? " (gstreamer1.0-pocketsphinx)" : ""
            throw AudioAnalysisError(
                "missing GStreamer elements \(missing.elements.joined(separator: ", "))\(packages)")
        }
        try checkStructure(path: path)
        let run = Run()
        let pipeline: Pipeline
        do {
            pipeline = try build(path: path, transcribe: transcribe, run: run)
        } catch {
            throw AudioAnalysisError("the analysis pipeline cannot be built: \(error.message)")
        }
        defer { pipeline.tearDown() }
        guard pipeline.setState(.playing) else {
            let failure = pipeline.bus.popError(timeout: .seconds(1))
            throw AudioAnalysisError(
                "the file cannot be decoded: \(failure?.reason ?? "the pipeline refused to start")")
        }
        let deadline = ContinuousClock.now + timeout
        loop: while true {
            guard ContinuousClock.now < deadline else {
                throw AudioAnalysisError("decoding took longer than \(timeout)")
            }
            // Decoding is not paced by a clock: a pipeline that yields nothing for this long is stuck (seen with a
            // file that is an ftyp box and garbage: qtdemux waited without posting an error), not slow.
            let stalled = run.state.withLock { ContinuousClock.now - $0.lastProgress > stallLimit }
            guard !stalled else {
                throw AudioAnalysisError("the file cannot be decoded: no audio came out of it in \(stallLimit)")
            }
            guard let message = pipeline.bus.pop(timeout: .milliseconds(500)) else { continue }
            switch message.kind {
            case .endOfStream:
                break loop
            case .error(let failure):
                throw AudioAnalysisError("the file cannot be decoded: \(failure.reason)")
            case .application(noAudioMessage):
                throw AudioAnalysisError("the file contains no audio stream")
            default:
                continue
            }
        }
        _ = pipeline.setState(.null)
        return run.state.withLock { state in
            let words = state.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            return AudioAnalysis(
                duration: state.meter.duration, loudness: state.meter.integratedLoudness,
                transcript: transcribe ? words.joined(separator: " ") : nil)
        }
    }

    /// Refuses a file that stops being MP4 before its end (ToukanCore's ``MP4Boxes``): GStreamer would decode its
    /// good part alone and say nothing of the rest.
    static func checkStructure(path: String) throws {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw AudioAnalysisError("the file cannot be read")
        }
        defer { try? file.close() }
        let size = Int64(try file.seekToEnd())
        let structure = try MP4Boxes.walk(size: size) { offset in
            try file.seek(toOffset: UInt64(offset))
            return [UInt8](try file.read(upToCount: 16) ?? Data())
        }
        if case .damaged(let valid, let reason) = structure {
            throw AudioAnalysisError(
                "the file is damaged: it is MP4 up to byte \(valid) of \(size), then not (\(reason)); "
                    + "record or send it again")
        }
    }

    private static func build(path: String, transcribe: Bool, run: Run) throws(GStreamerError) -> Pipeline {
        let pipeline = try Pipeline(name: "toukan-analysis")
        let source = try pipeline.make("filesrc", name: "source")
        source.set("location", path)
        let decoder = try pipeline.make("decodebin", name: "decoder")
        let convert = try pipeline.make("audioconvert", name: "convert")
        let resample = try pipeline.make("audioresample", name: "resample")
        let caps = try pipeline.make("capsfilter", name: "analysis-caps")
        caps.set("caps", parsing: "audio/x-raw,format=F32LE,rate=\(analysisRate),channels=1,layout=interleaved")
        try pipeline.link(source, decoder)
        try pipeline.link([convert, resample, caps])
        // The meter reads every buffer as it passes (one chain: a tee in front of pocketsphinx left it silent).
        caps.staticPad("src")?.addProbe(.buffers) { data in
            if let bytes = data.bufferBytes() {
                let samples = floats(littleEndian: bytes)
                run.state.withLock {
                    $0.meter.add(samples)
                    $0.lastProgress = .now
                }
            }
            return .pass
        }
        if transcribe {
            let speechConvert = try pipeline.make("audioconvert", name: "speech-convert")
            let speechResample = try pipeline.make("audioresample", name: "speech-resample")
            let speechCaps = try pipeline.make("capsfilter", name: "speech-caps")
            speechCaps.set("caps", parsing: "audio/x-raw,format=S16LE,rate=16000,channels=1")
            let recognizer = try pipeline.make("pocketsphinx", name: "recognizer")
            let textSink = try pipeline.make("fakesink", name: "text-sink")
            textSink.set("sync", false)
            try pipeline.link([caps, speechConvert, speechResample, speechCaps, recognizer, textSink])
            recognizer.staticPad("src")?.addProbe(.buffers) { data in
                if let bytes = data.bufferBytes() {
                    let text = String(decoding: bytes, as: UTF8.self)
                    run.state.withLock { $0.text.append(text) }
                }
                return .pass
            }
        } else {
            let sink = try pipeline.make("fakesink", name: "sink")
            sink.set("sync", false)
            try pipeline.link(caps, sink)
        }
        let convertInput = convert.staticPad("sink")
        let bus = pipeline.bus
        decoder.onPadAdded { pad in
            guard pad.mediaType?.hasPrefix("audio/") == true, let convertInput, !convertInput.isLinked else { return }
            if pad.link(to: convertInput) {
                run.state.withLock { $0.linkedAudio = true }
            }
        }
        decoder.onNoMorePads {
            if !run.state.withLock({ $0.linkedAudio }) { bus.post(application: noAudioMessage) }
        }
        return pipeline
    }
}
