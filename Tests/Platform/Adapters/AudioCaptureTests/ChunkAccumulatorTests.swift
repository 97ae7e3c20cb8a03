import Testing

@testable import AudioCapture

@Suite("Chunking")
struct ChunkAccumulatorTests {
    @Test("buffers of any size come out as exact chunks, in order, with the remainder carried")
    func exactChunks() {
        var accumulator = ChunkAccumulator(chunkSize: 4)
        var out: [[Float]] = []
        let input = (0..<23).map(Float.init)
        var index = 0
        for size in [1, 3, 7, 0, 2, 10] {
            out += accumulator.append(Array(input[index..<(index + size)]))
            index += size
        }
        #expect(out == stride(from: 0, to: 20, by: 4).map { start in (start..<(start + 4)).map(Float.init) })
        #expect(accumulator.pendingCount == 3)
    }
}
