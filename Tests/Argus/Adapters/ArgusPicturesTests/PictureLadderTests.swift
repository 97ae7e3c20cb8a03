import ArgusPictures
import Foundation
import GStreamer
import Synchronization
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
        let peak = ThreadPeak()
        let watching = Task.detached { await peak.watch() }
        let fitted = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await PictureLadder.fit(picture, width: 1920, limit: PictureLadder.thumbnail).width
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        watching.cancel()
        await watching.value
        #expect(fitted.count == 40 && fitted.allSatisfy { $0 <= 640 })
        let width = PipelineRunner.shared.width
        #expect(peak.most > 0, "no pipeline thread seen while 40 pictures were made")
        #expect(peak.most <= width, "\(peak.most) picture threads at once; the runner has \(width)")
        print("ladder burst: 40 pictures, at most \(peak.most) pipeline threads at once (runner width \(width))")
    }

    /// The most threads of this process that run pictures (the runner's, or a thread of a picture's own), sampled.
    final class ThreadPeak: Sendable {
        private let seen = Mutex(0)
        var most: Int { seen.withLock { $0 } }

        func watch() async {
            while !Task.isCancelled {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                let count = names.filter { task in
                    let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
                    return name.hasPrefix("gst-runner") || name.hasPrefix("homeapps.pictur")
                }.count
                seen.withLock { $0 = max($0, count) }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
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
