import Synchronization

/// What a sender hears about its video from the receiver: the report blocks for the video's SSRC in the RTCP
/// sender and receiver reports that arrive (read by a probe on webrtcbin's DTLS-SRTP decoder, after decryption).
///
/// Why not webrtcbin's statistics: GStreamer 1.22's RTP session keeps the report block on the *reporting* source,
/// one at a time ("FIXME, need to keep track who the RB block is from" in rtpsession.c), so when one receiver SSRC
/// reports on the audio and the video in one RTCP packet — as webrtcbin receivers, our own listener included,
/// do — `remote-inbound-rtp` shows only the last block (the audio's), and the video's loss is never seen.
final class VideoReceiverReports: Sendable {
    /// One RTCP report block (RFC 3550 §6.4.1), as far as the weak-link decision needs it.
    struct Block: Sendable, Hashable {
        /// The SSRC reported on.
        var ssrc: UInt32
        /// The fraction of its packets lost since the previous report (0…1; the 8-bit field / 256).
        var fractionLost: Double
        /// Its packets lost since the start (signed 24 bits).
        var cumulativeLost: Int
    }

    private struct Heard {
        var ssrc: UInt32?
        /// The worst fraction lost among the video's blocks since the last ``take()``.
        var worstFraction: Double?
        var blocks = 0
    }

    private let heard = Mutex(Heard())

    init() {}

    /// The SSRC of the sender's video (from its payloader's caps); blocks about other SSRCs are ignored.
    func listen(to ssrc: UInt32) {
        heard.withLock { $0.ssrc = ssrc }
    }

    /// Takes in one decrypted RTCP (compound) packet.
    func receive(_ packet: some Collection<UInt8>) {
        let blocks = Self.reportBlocks(in: packet)
        guard !blocks.isEmpty else { return }
        heard.withLock { heard in
            guard let ssrc = heard.ssrc else { return }
            for block in blocks where block.ssrc == ssrc {
                heard.worstFraction = max(heard.worstFraction ?? 0, block.fractionLost)
                heard.blocks += 1
            }
        }
    }

    /// The worst fraction lost reported for the video since the previous call; nil if no report came.
    func take() -> Double? {
        heard.withLock { heard in
            defer { heard.worstFraction = nil }
            return heard.worstFraction
        }
    }

    /// How many report blocks on the video have arrived (for tests and diagnostics).
    var blockCount: Int { heard.withLock { $0.blocks } }

    /// The report blocks of the sender reports (PT 200) and receiver reports (PT 201) in an RTCP compound packet.
    /// Other packets (feedback, SDES, BYE…) are skipped; a truncated or malformed packet ends the walk, keeping
    /// the blocks read before it.
    static func reportBlocks(in packet: some Collection<UInt8>) -> [Block] {
        let bytes = Array(packet.prefix(maximumPacketSize))
        var blocks: [Block] = []
        var offset = 0
        func word(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        while offset + 4 <= bytes.count {
            let first = bytes[offset]
            guard first >> 6 == 2 else { break }  // RTP version 2
            let count = Int(first & 0x1f)
            let type = bytes[offset + 1]
            let length = ((Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) + 1) * 4  // in 32-bit words - 1
            guard offset + length <= bytes.count else { break }
            let start: Int? = type == 200 ? offset + 28 : type == 201 ? offset + 8 : nil
            if let start {
                for index in 0..<count {
                    let block = start + index * 24
                    guard block + 24 <= offset + length else { break }
                    let lost = Int(word(block + 4) & 0x00ff_ffff)
                    blocks.append(
                        Block(
                            ssrc: word(block),
                            fractionLost: Double(bytes[block + 4]) / 256,
                            cumulativeLost: lost >= 0x80_0000 ? lost - 0x100_0000 : lost
                        )
                    )
                }
            }
            offset += length
        }
        return blocks
    }

    /// RTCP packets are at most an MTU; anything past this is not read.
    static let maximumPacketSize = 1_500
}
