import TestSupport
import Testing

@testable import Media

/// Reading the report blocks of RTCP sender/receiver reports, and keeping the video's worst loss between polls.
struct VideoReceiverReportsTests {
    static let video: UInt32 = 0x1122_3344
    static let audio: UInt32 = 0x5566_7788

    static func word(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// A report block: `fraction` (of 256) lost, `lost` cumulative (24-bit two's complement).
    static func block(_ ssrc: UInt32, fraction: UInt8, lost: Int32) -> [UInt8] {
        let cumulative = UInt32(bitPattern: lost) & 0x00ff_ffff
        return word(ssrc) + [fraction] + Array(word(cumulative).dropFirst()) + word(1_000) + word(7) + word(0) + word(0)
    }

    /// An RTCP packet: version 2, `count` in the first byte, `type`, length in words - 1.
    static func packet(type: UInt8, count: Int, body: [UInt8]) -> [UInt8] {
        let words = (body.count + 4) / 4 - 1
        return [0x80 | UInt8(count), type, UInt8(words >> 8), UInt8(words & 0xff)] + body
    }

    static func receiverReport(_ blocks: [[UInt8]]) -> [UInt8] {
        packet(type: 201, count: blocks.count, body: word(0xAAAA_0001) + blocks.flatMap { $0 })
    }

    static func senderReport(_ blocks: [[UInt8]]) -> [UInt8] {
        // Sender info: NTP (8), RTP timestamp, packet count, octet count.
        let info = word(1) + word(2) + word(3) + word(4) + word(5)
        return packet(type: 200, count: blocks.count, body: word(0xAAAA_0002) + info + blocks.flatMap { $0 })
    }

    /// A compound packet as a GStreamer receiver sends it: RR with blocks on the audio and the video, then SDES.
    static let compound =
        receiverReport([
            block(audio, fraction: 0, lost: 0), block(video, fraction: 51, lost: 120),
        ]) + packet(type: 202, count: 1, body: word(0xAAAA_0001) + [1, 4] + Array("host".utf8) + [0, 0])

    @Test("the blocks of a receiver report in a compound packet are read, with the fraction as a share of 256")
    func receiverReportBlocks() {
        let blocks = VideoReceiverReports.reportBlocks(in: Self.compound)
        #expect(blocks.map(\.ssrc) == [Self.audio, Self.video])
        #expect(blocks.map(\.fractionLost) == [0, 51.0 / 256])
        #expect(blocks.map(\.cumulativeLost) == [0, 120])
    }

    @Test("a sender report's blocks come after its sender info; negative cumulative losses keep their sign")
    func senderReportBlocks() {
        let blocks = VideoReceiverReports.reportBlocks(
            in: Self.senderReport([Self.block(Self.video, fraction: 255, lost: -3)])
        )
        #expect(blocks == [.init(ssrc: Self.video, fractionLost: 255.0 / 256, cumulativeLost: -3)])
    }

    @Test("feedback and truncated packets give no blocks, and blocks before a truncation are kept")
    func malformedPackets() {
        let pli = Self.packet(type: 206, count: 1, body: Self.word(1) + Self.word(Self.video))
        #expect(VideoReceiverReports.reportBlocks(in: pli).isEmpty)
        #expect(VideoReceiverReports.reportBlocks(in: Array(Self.compound.prefix(20))).isEmpty)
        let truncated =
            Self.receiverReport([Self.block(Self.video, fraction: 10, lost: 1)])
            + Array(Self.compound.prefix(30))
        #expect(VideoReceiverReports.reportBlocks(in: truncated).count == 1)
        // A count larger than the packet holds reads only the blocks that are there.
        var overCounted = Self.receiverReport([Self.block(Self.video, fraction: 10, lost: 1)])
        overCounted[0] = 0x80 | 5
        #expect(VideoReceiverReports.reportBlocks(in: overCounted).count == 1)
        #expect(VideoReceiverReports.reportBlocks(in: [UInt8]()).isEmpty)
    }

    @Test("random bytes never crash the reader", arguments: 0..<4)
    func fuzz(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed))
        for length in 0..<400 {
            var bytes = generator.bytes(length)
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = 0x80 | (bytes[0] & 0x1f) }
            if bytes.count > 1, Bool.random(using: &generator) { bytes[1] = 201 }
            let blocks = VideoReceiverReports.reportBlocks(in: bytes)
            #expect(blocks.count * 24 <= bytes.count)
        }
    }

    @Test("only the video's blocks count, the worst since the previous take, and a take empties it")
    func worstVideoLossBetweenTakes() {
        let reports = VideoReceiverReports()
        reports.receive(Self.compound)
        #expect(reports.take() == nil, "nothing is kept before the video's SSRC is known")
        reports.listen(to: Self.video)
        reports.receive(Self.receiverReport([Self.block(Self.audio, fraction: 200, lost: 9)]))
        #expect(reports.take() == nil, "the audio's loss is not the video's")
        reports.receive(Self.compound)
        reports.receive(Self.receiverReport([Self.block(Self.video, fraction: 13, lost: 130)]))
        #expect(reports.take() == 51.0 / 256)
        #expect(reports.take() == nil)
        #expect(reports.blockCount == 2)
    }
}
