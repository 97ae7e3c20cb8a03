public import Foundation
import GStreamer
import Synchronization

/// JPEGs made to fit a byte limit whatever the source: down a ladder of sizes and qualities (GStreamer's jpegdec,
/// videoscale and jpegenc), the first step that fits wins. Thumbnails must stay ≤ 50 KB and snapshots ≤ 100 KB
/// (seed 004), even from a 4K camera or a noisy night picture that JPEG compresses badly.
public enum PictureLadder {
    /// A thumbnail: at most 640 pixels wide, ≤ 50 KB.
    public static let thumbnail = Limit(bytes: 50_000, width: 640)
    /// A snapshot: at most 1280 pixels wide, ≤ 100 KB.
    public static let snapshot = Limit(bytes: 100_000, width: 1280)

    public struct Limit: Sendable, Hashable {
        public var bytes: Int
        public var width: Int

        public init(bytes: Int, width: Int) {
            self.bytes = bytes
            self.width = width
        }
    }

    /// A picture that fits, and the step that made it.
    public struct Fitted: Sendable, Hashable {
        public var jpeg: Data
        public var width: Int
        public var height: Int
        /// The JPEG quality it was encoded at (nil: the source fitted as it was).
        public var quality: Int?
    }

    /// Widths and qualities tried in order, largest first.
    static let steps: [(width: Int, quality: Int)] = [
        (1280, 85), (1280, 70), (960, 70), (640, 70), (640, 55), (480, 50), (320, 50), (320, 35), (240, 35),
        (160, 30), (120, 20),
    ]

    /// `jpeg` (of `width`) made to fit `limit`: the source itself when it already does, else the first ladder step
    /// that does (never wider than the source or the limit).
    /// - Throws: ``PictureError`` when the bytes are not a picture GStreamer can decode, or nothing fits.
    public static func fit(_ jpeg: [UInt8], width: Int, limit: Limit) async throws -> Fitted {
        if jpeg.count <= limit.bytes, width <= limit.width, let size = try? await size(of: jpeg) {
            return Fitted(jpeg: Data(jpeg), width: size.width, height: size.height, quality: nil)
        }
        for step in steps where step.width <= min(limit.width, max(width, steps.last!.width)) {
            let made = try await encode(jpeg, width: step.width, quality: step.quality)
            if made.jpeg.count <= limit.bytes {
                return Fitted(jpeg: Data(made.jpeg), width: made.width, height: made.height, quality: step.quality)
            }
        }
        throw PictureError("no step of the ladder made the picture fit \(limit.bytes) bytes")
    }

    /// The picture's size (decoding it).
    static func size(of jpeg: [UInt8]) async throws -> (width: Int, height: Int) {
        let decoded = try await run(jpeg, width: nil, quality: nil)
        return (decoded.width, decoded.height)
    }

    /// `jpeg` decoded, scaled to `width` (aspect kept) and encoded at `quality`.
    static func encode(_ jpeg: [UInt8], width: Int, quality: Int) async throws -> (
        jpeg: [UInt8], width: Int, height: Int
    ) {
        try await run(jpeg, width: width, quality: quality)
    }

    /// One short pipeline on the process's ``PipelineRunner`` (bounded threads: a burst of snapshots waits its turn
    /// instead of starting a thread each): `appsrc ! jpegdec ! videoconvert ! videoscale ! capsfilter ! jpegenc !
    /// appsink`. Elements are made and set through properties; no text is parsed as a pipeline.
    private static func run(_ jpeg: [UInt8], width: Int?, quality: Int?) async throws(PictureError) -> (
        jpeg: [UInt8], width: Int, height: Int
    ) {
        try await PipelineRunner.shared.run { () throws(PictureError) in
            try runBlocking(jpeg, width: width, quality: quality)
        }
    }

    private static func runBlocking(_ jpeg: [UInt8], width: Int?, quality: Int?) throws(PictureError) -> (
        jpeg: [UInt8], width: Int, height: Int
    ) {
        guard !jpeg.isEmpty, jpeg.count <= 32 << 20 else { throw PictureError("not a picture (\(jpeg.count) bytes)") }
        do {
            try GStreamer.requireElements(requiredElements)
            let pipeline = try Pipeline(name: "homeapps-picture-ladder")
            let source = try pipeline.make("appsrc", name: "source")
            source.set("caps", parsing: "image/jpeg")
            source.set("format", parsing: "time")
            let decode = try pipeline.make("jpegdec", name: "decode")
            let convert = try pipeline.make("videoconvert", name: "convert")
            let scale = try pipeline.make("videoscale", name: "scale")
            let size = try pipeline.make("capsfilter", name: "size")
            size.set("caps", parsing: width.map { "video/x-raw,width=\($0),pixel-aspect-ratio=1/1" } ?? "video/x-raw")
            let encode = try pipeline.make("jpegenc", name: "encode")
            encode.set("quality", Int32(quality ?? 85))
            let sink = try pipeline.make("appsink", name: "sink")
            let result = Mutex<(bytes: [UInt8], width: Int, height: Int)?>(nil)
            sink.configureAppSink(caps: "image/jpeg", sync: false) { sample in
                if let bytes = sample.bytes(), let size = sample.videoSize {
                    result.withLock { $0 = (bytes, size.width, size.height) }
                }
                return .ok
            }
            try pipeline.link([source, decode, convert, scale, size, encode, sink])
            let input = AppSource(source)
            input.push(bytes: jpeg, presentationTime: .zero, duration: .milliseconds(40))
            input.endOfStream()
            if let failure = pipeline.playToEnd(timeout: .seconds(10)) {
                throw PictureError("the picture could not be decoded: \(failure.message)")
            }
            guard let made = result.withLock({ $0 }) else { throw PictureError("the picture gave nothing") }
            return (made.bytes, made.width, made.height)
        } catch let error as PictureError {
            throw error
        } catch let error as GStreamerError {
            throw PictureError(error.message)
        } catch {
            throw PictureError("\(error)")
        }
    }

    static let requiredElements = [
        "appsrc", "jpegdec", "videoconvert", "videoscale", "capsfilter", "jpegenc", "appsink",
    ]
}

/// Why a picture could not be made to fit.
public struct PictureError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) { self.description = description }
}
