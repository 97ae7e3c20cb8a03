import CNGTCP2

/// The bytes written to one stream, kept at stable addresses until the peer acknowledges them: ngtcp2 does not
/// copy stream data, it retransmits from these buffers.
final class StreamSendBuffer {
    private struct Chunk {
        let pointer: UnsafeMutablePointer<UInt8>
        let offset: UInt64
        let count: Int
    }

    private var chunks: [Chunk] = []
    private var head = 0
    /// Bytes ever appended.
    private(set) var appended: UInt64 = 0
    /// Bytes handed to ngtcp2 (sent at least once).
    private(set) var sent: UInt64 = 0
    /// Bytes acknowledged by the peer.
    private(set) var acknowledged: UInt64 = 0

    var unacknowledged: Int { Int(appended - acknowledged) }
    var hasUnsent: Bool { sent < appended }

    func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        pointer.initialize(from: bytes, count: bytes.count)
        chunks.append(Chunk(pointer: pointer, offset: appended, count: bytes.count))
        appended += UInt64(bytes.count)
    }

    /// The next unsent bytes, as one ngtcp2 vector into stable storage.
    func unsentVector() -> ngtcp2_vec? {
        guard hasUnsent else { return nil }
        for index in head..<chunks.count {
            let chunk = chunks[index]
            if sent >= chunk.offset, sent < chunk.offset + UInt64(chunk.count) {
                let skip = Int(sent - chunk.offset)
                return ngtcp2_vec(base: chunk.pointer + skip, len: chunk.count - skip)
            }
        }
        return nil
    }

    func markSent(_ count: Int) {
        sent += UInt64(count)
    }

    /// Frees every chunk wholly below `offset` (the peer has it).
    func acknowledge(upTo offset: UInt64) {
        acknowledged = max(acknowledged, min(offset, appended))
        while head < chunks.count, chunks[head].offset + UInt64(chunks[head].count) <= acknowledged {
            chunks[head].pointer.deallocate()
            head += 1
        }
        if head > 64, head * 2 > chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    deinit {
        for chunk in chunks[head...] {
            chunk.pointer.deallocate()
        }
    }
}
