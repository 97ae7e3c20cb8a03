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

    /// Appends samples and returns the chunks they complete.
    ///
    /// - Parameter samples: Samples in stream order.
    /// - Returns: The completed chunks, oldest first.
    mutating func append(_ samples: [Float]) -> [[Float]] {
        var chunks: [[Float]] = []
        var index = 0
        while index < samples.count {
            let take = min(chunkSize - pending.count, samples.count - index)
            pending.append(contentsOf: samples[index..<(index + take)])
            index += take
            if pending.count == chunkSize {
                chunks.append(pending)
                pending = []
                pending.reserveCapacity(chunkSize)
            }
        }
        return chunks
    }
}
