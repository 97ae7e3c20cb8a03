import ArgusPictures
import Foundation
import GStreamer
import TestSupport
import Testing

@Suite("Pictures made to fit: thumbnails ≤ 50 KB, snapshots ≤ 100 KB, whatever the source")
struct PictureLadderTests {
    /// A JPEG of `pattern` (videotestsrc) at `width × height` and `quality`, made by gst-launch-1.0.
    static func picture(pattern: String, width: Int, height: Int, quality: Int) async throws -> [UInt8] {
        let directory = try Subprocess.temporaryDirectory("ladder")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("picture.jpg").path
        let made = try await Subprocess.run(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "pattern=\(pattern)", "num-buffers=1", "!",
                "video/x-raw,width=\(width),height=\(height)", "!", "jpegenc", "quality=\(quality)", "!", "filesink",
                "location=\(file)",
            ])
        #expect(made.status == 0, "gst-launch-1.0 (gstreamer1.0-tools): \(made.stderrText)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    @Test("a 4K picture of noise at quality 95 comes down the ladder under both limits")
    func noisy() async throws {
        let noise = try await Self.picture(pattern: "snow", width: 3840, height: 2160, quality: 95)
        #expect(noise.count > 1_000_000, "the fixture is not large: \(noise.count) bytes")
        let thumbnail = try await PictureLadder.fit(noise, width: 3840, limit: PictureLadder.thumbnail)
        #expect(thumbnail.jpeg.count <= 50_000 && thumbnail.width <= 640 && thumbnail.quality != nil)
        #expect(thumbnail.height * 16 == thumbnail.width * 9, "aspect kept: \(thumbnail.width)×\(thumbnail.height)")
        let snapshot = try await PictureLadder.fit(noise, width: 3840, limit: PictureLadder.snapshot)
        #expect(snapshot.jpeg.count <= 100_000 && snapshot.width <= 1280)
        #expect(Array(snapshot.jpeg.prefix(2)) == [0xFF, 0xD8], "a JPEG")
        print(
            "ladder: noise \(noise.count) B → thumbnail \(thumbnail.width)px q\(thumbnail.quality ?? 0) "
                + "\(thumbnail.jpeg.count) B, snapshot \(snapshot.width)px q\(snapshot.quality ?? 0) \(snapshot.jpeg.count) B"
        )
    }

    @Test(
        "40 snapshots asked for at once all fit, and never take more pipeline threads than the runner has (not one each)"
    )
    func burst() async throws {
        let picture = try await Self.picture(pattern: "ball", width: 1920, height: 1080, quality: 90)
        let runner = PipelineRunner.shared
        let fitted = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await PictureLadder.fit(picture, width: 1920, limit: PictureLadder.thumbnail).width
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(fitted.count == 40 && fitted.allSatisfy { $0 <= 640 })
        // Counted by the runner itself: a thread's OS name is no measure (GStreamer's streaming threads, started
        // from a runner thread, inherit its name until they name themselves).
        #expect(runner.peakConcurrency > 0, "the pictures were not made on the pipeline runner")
        #expect(runner.threadCount <= runner.width, "\(runner.threadCount) runner threads; it has \(runner.width)")
        #expect(runner.peakConcurrency <= runner.width, "\(runner.peakConcurrency) pictures at once")
        print(
            "ladder burst: 40 pictures on \(runner.threadCount) runner threads, at most \(runner.peakConcurrency) at "
                + "once (width \(runner.width))")
    }

    @Test("a small picture that fits is kept as it is; bytes that are no picture are refused")
    func smallAndBroken() async throws {
        let small = try await Self.picture(pattern: "ball", width: 320, height: 240, quality: 70)
        let kept = try await PictureLadder.fit(small, width: 320, limit: PictureLadder.thumbnail)
        #expect(kept.quality == nil && kept.jpeg == Data(small) && kept.width == 320 && kept.height == 240)
        await #expect(throws: PictureError.self) {
            try await PictureLadder.fit(Array("not a picture".utf8), width: 100, limit: PictureLadder.thumbnail)
        }
    }
}
