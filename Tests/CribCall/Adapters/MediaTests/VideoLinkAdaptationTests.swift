import GStreamer
import Testing

@testable import Media

/// The weak-link decision (reports in, `.reduce` / `.restore` out) without pipelines, and the weak-link format.
struct VideoLinkAdaptationTests {
    typealias Report = VideoLinkAdaptation.Report

    static let lossy = Report(fractionLost: 0.2, roundTrip: .milliseconds(2))
    static let clean = Report(fractionLost: 0, roundTrip: .milliseconds(2))

    /// Feeds one report a second from `start` and returns the actions with the second they came at.
    static func run(
        _ adaptation: inout VideoLinkAdaptation,
        _ reports: [Report],
        from start: Int = 0
    ) -> [(second: Int, action: VideoLinkAdaptation.Action)] {
        var actions: [(Int, VideoLinkAdaptation.Action)] = []
        for (offset, report) in reports.enumerated() {
            let second = start + offset
            if let action = adaptation.observe(report, at: .seconds(second)) { actions.append((second, action)) }
        }
        return actions
    }

    @Test("a clean link never changes the video")
    func cleanLinkStays() {
        var adaptation = VideoLinkAdaptation()
        #expect(Self.run(&adaptation, Array(repeating: Self.clean, count: 60)).isEmpty)
        #expect(adaptation.quality == .configured)
    }

    @Test("loss above 5 % reduces the video once it has lasted 3 s, not before")
    func sustainedLossReduces() {
        var adaptation = VideoLinkAdaptation()
        let actions = Self.run(&adaptation, Array(repeating: Self.lossy, count: 10))
        #expect(actions.map(\.second) == [3])
        #expect(actions.map(\.action) == [.reduce])
        #expect(adaptation.quality == .reduced)
    }

    @Test("loss at or under the threshold, or interrupted by a clean report, does not reduce")
    func shortOrLightLossStays() {
        var light = VideoLinkAdaptation()
        #expect(Self.run(&light, Array(repeating: Report(fractionLost: 0.05), count: 20)).isEmpty)

        var interrupted = VideoLinkAdaptation()
        let bursts = Array(repeating: [Self.lossy, Self.lossy, Self.lossy, Self.clean], count: 5).flatMap { $0 }
        #expect(Self.run(&interrupted, bursts).isEmpty)
        #expect(interrupted.quality == .configured)
    }

    @Test("the configured video returns after 10 s of a good link, and loss in between restarts the wait")
    func goodLinkRestores() {
        var adaptation = VideoLinkAdaptation()
        #expect(Self.run(&adaptation, Array(repeating: Self.lossy, count: 4)).map(\.action) == [.reduce])
        // Good from 4 s; a lossy report at 9 s restarts the 10 s: the restore comes at 10 + 10 = 20 s.
        let reports = Array(repeating: Self.clean, count: 5) + [Self.lossy] + Array(repeating: Self.clean, count: 15)
        let actions = Self.run(&adaptation, reports, from: 4)
        #expect(actions.map(\.second) == [20])
        #expect(actions.map(\.action) == [.restore])
        #expect(adaptation.quality == .configured)
        // And it can drop again.
        #expect(Self.run(&adaptation, Array(repeating: Self.lossy, count: 5), from: 25).map(\.second) == [28])
    }

    @Test("a long round trip counts as a weak link even without loss")
    func slowRoundTripReduces() {
        var adaptation = VideoLinkAdaptation()
        let slow = Report(fractionLost: 0, roundTrip: .milliseconds(800))
        #expect(Self.run(&adaptation, Array(repeating: slow, count: 5)).map(\.action) == [.reduce])
    }

    @Test("reports that say nothing about the link change nothing, and do not break a run of bad ones")
    func emptyReportsAreIgnored() {
        var adaptation = VideoLinkAdaptation()
        // Bad from 0 s; the empty report at 3 s decides nothing, the bad one at 4 s reduces.
        let reports = [Self.lossy, Report(), Self.lossy, Report(), Self.lossy, Self.lossy]
        #expect(Self.run(&adaptation, reports).map(\.second) == [4])
    }

    @Test("a report with a short round trip but no loss figure neither makes the link good nor bad")
    func roundTripAloneSaysLittle() {
        var adaptation = VideoLinkAdaptation()
        let quiet = Report(roundTrip: .milliseconds(2))
        // Bad at 0 and 1 s, no receiver report on the video at 2 s, bad again at 3 s: 3 s of loss.
        let actions = Self.run(&adaptation, [Self.lossy, Self.lossy, quiet, Self.lossy])
        #expect(actions.map(\.second) == [3])
        // Reduced: 20 s of quiet reports do not restore.
        #expect(Self.run(&adaptation, Array(repeating: quiet, count: 20), from: 4).isEmpty)
        #expect(adaptation.quality == .reduced)
    }

    @Test(
        "the weak-link format is 480 lines at the same aspect ratio and rate, never larger than the configured one",
        arguments: [
            (1280, 720, 854), (1920, 1080, 854), (640, 480, 640), (320, 240, 320), (1280, 960, 640),
        ]
    )
    func reducedFormat(width: Int, height: Int, reducedWidth: Int) {
        let configured = GStreamerMediaEngine.VideoFormat(width: width, height: height, framesPerSecond: 25)
        let reduced = VideoLinkAdaptation.reducedFormat(of: configured)
        #expect(reduced.width == reducedWidth)
        #expect(reduced.height == min(480, height))
        #expect(reduced.framesPerSecond == 25)
        #expect(reduced.width % 2 == 0)
    }

    @Test("the weak-link bitrate is half the configured one, at least 100 kbps, never more than configured")
    func reducedBitrate() {
        #expect(VideoLinkAdaptation.reducedBitrate(of: 500_000) == 250_000)
        #expect(VideoLinkAdaptation.reducedBitrate(of: 150_000) == 100_000)
        #expect(VideoLinkAdaptation.reducedBitrate(of: 80_000) == 80_000)
    }

    @Test(
        "H.264 is announced as constrained baseline at the lowest level that holds the format (at least 3.1)",
        arguments: [
            (320, 240, 15, "42e01f"), (1280, 720, 30, "42e01f"), (1280, 720, 60, "42e020"), (1920, 1080, 30, "42e028"),
            (1920, 1080, 60, "42e02a"),
        ]
    )
    func h264ProfileLevel(width: Int, height: Int, rate: Int, expected: String) {
        let format = GStreamerMediaEngine.VideoFormat(width: width, height: height, framesPerSecond: rate)
        #expect(GStreamerMediaEngine.VideoCodec.h264ProfileLevelId(for: format) == expected)
    }

    @Test("codecs: automatic resolves to H.264 when x264enc is installed, and encoding names map back")
    func codecs() throws {
        try GStreamer.initialize()
        let hasH264 = GStreamer.hasElement("x264enc") && GStreamer.hasElement("rtph264pay")
        #expect(GStreamerMediaEngine.VideoCodec.automatic.resolved == (hasH264 ? .h264 : .vp8))
        #expect(GStreamerMediaEngine.VideoCodec(encodingName: "h264") == .h264)
        #expect(GStreamerMediaEngine.VideoCodec(encodingName: "VP8") == .vp8)
        #expect(GStreamerMediaEngine.VideoCodec(encodingName: "VP9") == nil)
        #expect(GStreamerMediaEngine.VideoCodec.h264.payloadType == 102)
        #expect(GStreamerMediaEngine.VideoCodec.vp8.payloadType == 96)
    }
}
