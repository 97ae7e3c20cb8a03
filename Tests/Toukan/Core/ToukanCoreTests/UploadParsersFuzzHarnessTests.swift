import Foundation
import FuzzHarness
import TestSupport
import Testing

/// The upload-parsers fuzz harness's invariants in every `make test`: over the committed seeds and a deterministic
/// stream of mutations of them (the long randomized run is `make fuzz TARGET=upload-parsers`).
@Suite("Upload parsers: fuzz harness invariants hold on seeds and mutations")
struct UploadParsersFuzzHarnessTests {
    static func seeds() throws -> [[UInt8]] {
        let directory = Fixtures.repositoryRoot.appendingPathComponent("Fuzz/upload-seeds")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map {
            Array(try Data(contentsOf: directory.appendingPathComponent($0)))
        }
    }

    @Test("every seed passes the harness")
    func seedsPass() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 8)
        for seed in seeds { UploadParsersFuzzer.run(seed) }
    }

    @Test("5,000 deterministic mutations of the seeds pass the harness")
    func mutationsPass() throws {
        let seeds = try Self.seeds().filter { !$0.isEmpty }
        var random = SplitMix64(seed: 0x70CA)
        for _ in 0..<5_000 {
            var input = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(random.next() % 4)) {
                guard !input.isEmpty else { break }
                let position = Int(random.next() % UInt64(input.count))
                switch random.next() % 4 {
                case 0: input[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: input.remove(at: position)
                case 2: input.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                default: input.insert(contentsOf: input[position...].prefix(8), at: position)
                }
            }
            UploadParsersFuzzer.run(input)
        }
    }
}
