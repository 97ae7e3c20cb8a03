public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a recording receiver (``GStreamerMediaEngine/ReceiverOutput/record(_:)``) writes each stream it receives,
/// as `cribcall listen --record PATH` names it:
///
/// - `NAME.wav`: the stream's audio, 16-bit mono 48 kHz WAV (video is received and dropped).
/// - `NAME.mkv`: everything the stream brings, as received (no re-encoding): Opus audio, and H.264 or VP8 video
///   for `audio_video`, in Matroska.
/// - an existing directory: one WAV per stream inside, named after its session id.
///
/// A listener may hold several streams: the first one gets `NAME.ext`, the next `NAME-2.ext`, `NAME-3.ext`…
/// An existing file is never overwritten: it is skipped the same way. Files are created 0600 (a recording of the
/// nursery is private).
public final class RecordingFiles: Sendable, Hashable {
    /// What a recording holds.
    public enum Format: Sendable, Hashable {
        /// Audio only, decoded (`.wav`).
        case wav
        /// Audio and video as received (`.mkv`).
        case matroska
    }

    /// The file extension of each format.
    public static let extensions: [String: Format] = ["wav": .wav, "mkv": .matroska]

    /// The format of every file.
    public let format: Format
    private let destination: Destination
    private let onFile: @Sendable (_ sessionId: String, _ file: URL) -> Void
    private let taken = Mutex<Int>(0)

    private enum Destination: Sendable {
        case directory(URL)
        case file(URL)
    }

    /// - Parameters:
    ///   - path: A `.wav` or `.mkv` file in an existing directory, or an existing directory.
    ///   - onFile: Told which file each stream is written to, when its recording starts.
    /// - Throws: ``MediaError`` (`.invalidConfiguration`) when the path cannot be recorded to, saying what to give.
    public init(
        path: URL,
        onFile: @escaping @Sendable (_ sessionId: String, _ file: URL) -> Void = { _, _ in }
    ) throws(MediaError) {
        self.onFile = onFile
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory), isDirectory.boolValue {
            format = .wav
            destination = .directory(path)
            return
        }
        guard let format = Self.extensions[path.pathExtension.lowercased()] else {
            throw MediaError(
                code: .invalidConfiguration,
                message: "cannot record to '\(path.path)': give a file ending in .wav (audio) or .mkv (audio and "
                    + "video), or an existing directory"
            )
        }
        let parent = path.deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw MediaError(
                code: .invalidConfiguration,
                message: "cannot record to '\(path.path)': the directory '\(parent.path)' does not exist"
            )
        }
        self.format = format
        destination = .file(path)
    }

    /// Creates the file the stream `sessionId` is recorded to (empty, 0600, never an existing one).
    /// - Throws: ``MediaError`` (`.pipelineFailed`) when no file can be created there.
    func create(sessionId: String) throws(MediaError) -> URL {
        let candidates: (Int) -> URL
        var index = 1
        switch destination {
        case .directory(let directory):
            let base = Self.safeName(sessionId)
            candidates = { index in
                directory.appendingPathComponent(index == 1 ? "\(base).wav" : "\(base)-\(index).wav")
            }
        case .file(let file):
            let stem = file.deletingPathExtension().lastPathComponent
            let folder = file.deletingLastPathComponent()
            let suffix = file.pathExtension
            candidates = { index in
                index == 1 ? file : folder.appendingPathComponent("\(stem)-\(index).\(suffix)")
            }
            // Numbers this listener already handed out are not tried again.
            index = taken.withLock { $0 } + 1
        }
        // A file that exists (someone else's, or an earlier run's) is skipped: O_EXCL.
        for _ in 0..<10_000 {
            let url = candidates(index)
            let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                close(descriptor)
                taken.withLock { $0 = max($0, index) }
                onFile(sessionId, url)
                return url
            }
            guard errno == EEXIST else {
                let reason = String(cString: strerror(errno))
                throw MediaError(code: .pipelineFailed, message: "cannot create the recording \(url.path): \(reason)")
            }
            index += 1
        }
        throw MediaError(code: .pipelineFailed, message: "no free recording file name next to \(candidates(1).path)")
    }

    /// A session id as a file name: characters other than ASCII letters, digits, `-` and `_` become `_`.
    static func safeName(_ sessionId: String) -> String {
        let safe = String(
            sessionId.unicodeScalars.map { scalar -> Character in
                let allowed =
                    scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_")
                return allowed ? Character(scalar) : "_"
            }
        )
        return safe.isEmpty ? "stream" : safe
    }

    public static func == (lhs: RecordingFiles, rhs: RecordingFiles) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
