import FuzzHarness
import TestSupport
import Testing

/// The upload-parsers fuzz harness's invariants in every `make test` (the long randomized run is
/// `make fuzz TARGET=upload-parsers`).
@Suite("Upload parsers: fuzz harness invariants hold on seeds and mutations")
struct UploadParsersFuzzHarnessTests {
    @Test("every seed passes the harness")
    func seedsPass() throws {
        let seeds = try FuzzSeeds.load("upload-seeds")
        #expect(seeds.count >= 8)
        for seed in seeds { UploadParsersFuzzer.run(seed) }
    }

    @Test("5,000 deterministic mutations of the seeds pass the harness")
    func mutationsPass() throws {
        for input in FuzzSeeds.mutations(of: try FuzzSeeds.load("upload-seeds"), count: 5_000, seed: 0x70CA) {
            UploadParsersFuzzer.run(input)
        }
    }
}
