import Foundation
import GStreamer

/// The WAV files behind `test:tone` and `test:speech`, rendered once into a directory and reused (a file is
/// written under a temporary name and renamed, so concurrent recorders never read half a file).
enum SignalFiles {
    /// What `test:speech` says (looped; the pause at the end separates the repetitions).
    static let sentence =
        "This is a Toukan test recording. One, two, three, four, five. "
        + "The quick brown fox jumps over the lazy dog."

    /// The WAV file for `source` in `directory`, rendered if it is not there yet.
    ///
    /// - Throws: ``RecorderError/Code/missingDependency`` without espeak-ng or the GStreamer elements,
    ///   ``RecorderError/Code/outputUnwritable`` if the directory cannot be written.
    static func file(for source: RecordingSource, in directory: URL) throws(RecorderError) -> URL? {
        let name: String
        switch source {
        case .input: return nil
        case .tone: name = "tone-\(RecordingSource.toneFrequency)hz.wav"
        case .speech: name = "speech.wav"
        }
        let file = directory.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: file.path) { return file }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw RecorderError(
                code: .outputUnwritable,
                message: "cannot create \(directory.path) for the test signals (\(error.localizedDescription))"
            )
        }
        let partial = directory.appendingPathComponent(".\(name).\(ProcessInfo.processInfo.processIdentifier)")
        defer { try? FileManager.default.removeItem(at: partial) }
        if source == .tone {
            try renderTone(to: partial)
        } else {
            try renderSpeech(to: partial)
        }
        // rename(2) replaces atomically: a concurrent renderer's identical file is fine to replace.
        guard rename(partial.path, file.path) == 0 else {
            throw RecorderError(code: .outputUnwritable, message: "cannot write \(file.path)")
        }
        return file
    }

    /// One second of the tone (a whole number of periods, so it loops without a click), 44.1 kHz 16-bit mono.
    private static func renderTone(to file: URL) throws(RecorderError) {
        let failure: GStreamerFailure?
        do {
            failure = try tonePipeline(to: file).playToEnd(timeout: .seconds(60))
        } catch {
            throw RecorderError(error)
        }
        if let failure {
            throw RecorderError(
                code: .outputUnwritable, message: "cannot render test:tone to \(file.path) (\(failure.reason))")
        }
    }

    private static func tonePipeline(to file: URL) throws(GStreamerError) -> Pipeline {
        try GStreamer.requireElements(["audiotestsrc", "capsfilter", "wavenc", "filesink"])
        let pipeline = try Pipeline(name: "test-tone")
        let source = try pipeline.make("audiotestsrc", name: "tone")
        source.set("freq", parsing: "\(RecordingSource.toneFrequency)")
        source.set("volume", parsing: "0.25")
        source.set("samplesperbuffer", Int32(4_410))
        source.set("num-buffers", Int32(10))
        let caps = try pipeline.make("capsfilter", name: "caps")
        caps.set("caps", parsing: "audio/x-raw,format=S16LE,rate=44100,channels=1")
        let encoder = try pipeline.make("wavenc", name: "wav")
        let sink = try pipeline.make("filesink", name: "sink")
        sink.set("location", file.path)
        try pipeline.link([source, caps, encoder, sink])
        return pipeline
    }

    /// The sentence spoken by espeak-ng (a 22.05 kHz mono WAV).
    private static func renderSpeech(to file: URL) throws(RecorderError) {
        let program = ["/usr/bin/espeak-ng", "/usr/local/bin/espeak-ng"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let program else {
            throw RecorderError(
                code: .missingDependency,
                message: "test:speech is spoken by espeak-ng, which is not installed: apt-get install espeak-ng"
            )
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["-w", file.path, "-s", "150", sentence]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw RecorderError(code: .missingDependency, message: "cannot run \(program): \(error)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RecorderError(
                code: .missingDependency,
                message: "espeak-ng failed (status \(process.terminationStatus)) rendering test:speech: "
                    + "reinstall espeak-ng and espeak-ng-data"
            )
        }
    }
}
