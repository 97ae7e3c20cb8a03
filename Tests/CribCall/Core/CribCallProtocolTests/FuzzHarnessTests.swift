import Foundation
import FuzzHarness
import TestSupport
import Testing

/// Runs the libFuzzer harness's invariants in every `make test`: over the committed seeds and a deterministic
/// stream of mutations of them (the long randomized run is `make fuzz`).
@Suite("Fuzz harness invariants hold on seeds and mutations")
struct FuzzHarnessTests {
    static func seeds() throws -> [[UInt8]] {
        let directory = Fixtures.repositoryRoot.appendingPathComponent("Fuzz/seeds")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map {
            Array(try Data(contentsOf: directory.appendingPathComponent($0)))
        }
    }

    @Test("every seed passes the harness")
    func seedsPass() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 10)
        for seed in seeds {
            ControlChannelFuzzer.run(seed)
        }
    }

    @Test("20,000 deterministic mutations of the seeds pass the harness")
    func mutationsPass() throws {
        let seeds = try Self.seeds()
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        for _ in 0..<20_000 {
            var input = seeds[Int(next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(next() % 4)) {
                guard !input.isEmpty else { break }
                let position = Int(next() % UInt64(input.count))
                switch next() % 4 {
                case 0: input[position] = UInt8(truncatingIfNeeded: next())
                case 1: input.remove(at: position)
                case 2: input.insert(UInt8(truncatingIfNeeded: next()), at: position)
                default: input.insert(contentsOf: input[position...].prefix(8), at: position)
                }
            }
            ControlChannelFuzzer.run(input)
        }
    }
}
