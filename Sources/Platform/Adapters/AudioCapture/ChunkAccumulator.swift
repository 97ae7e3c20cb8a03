/// Cuts a stream of samples of any buffer size into chunks of exactly `chunkSize` samples.
struct ChunkAccumulator: Sendable {
    let chunkSize: Int
    private var pending: [Float] = []

    init(chunkSize: Int) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.chunkSize = chunkSize
        pending.reserveCapacity(chunkSize)
    }

    /// Samples received but not yet part of a complete chunk.
    var pendingCount: Int { pending.count }

    /// Appends native-endian 32-bit float samples (any alignment) and returns the chunks they complete.
    ///
    /// - Parameter bytes: Raw sample bytes; a trailing partial sample (fewer than 4 bytes) is ignored.
    /// - Returns: The completed chunks, oldest first; empty if none completed.
    mutating func append(nativeFloats bytes: UnsafeRawBufferPointer) -> [[Float]] {
        let stride = MemoryLayout<Float>.size
        let count = bytes.count / stride
        var chunks: [[Float]] = []
        var index = 0
        while index < count {
            let take = min(chunkSize - pending.count, count - index)
            for offset in index..<(index + take) {
                pending.append(bytes.loadUnaligned(fromByteOffset: offset * stride, as: Float.self))
            }
            index += take
            if pending.count == chunkSize {
                chunks.append(pending)
                pending = []
                pending.reserveCapacity(chunkSize)
            }
        }
        return chunks
    }

    /// Appends samples and returns the chunks they complete.
    ///
    /// - Parameter samples: Samples in stream order.
    /// - Returns: The completed chunks, oldest first.
    mutating func append(_ samples: [Float]) -> [[Float]] {
        samples.withUnsafeBytes { append(nativeFloats: $0) }
    }
}
