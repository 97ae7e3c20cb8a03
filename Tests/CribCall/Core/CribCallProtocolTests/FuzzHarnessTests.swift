import FuzzHarness
import TestSupport
import Testing

/// Runs the libFuzzer harness's invariants in every `make test`: over the committed seeds and a deterministic
/// stream of mutations of them (the long randomized run is `make fuzz`).
@Suite("Fuzz harness invariants hold on seeds and mutations")
struct FuzzHarnessTests {
    @Test("every seed passes the harness")
    func seedsPass() throws {
        let seeds = try FuzzSeeds.load("seeds")
        #expect(seeds.count >= 10)
        for seed in seeds { ControlChannelFuzzer.run(seed) }
    }

    @Test("20,000 deterministic mutations of the seeds pass the harness")
    func mutationsPass() throws {
        for input in FuzzSeeds.mutations(of: try FuzzSeeds.load("seeds"), count: 20_000, seed: 0x5EED) {
            ControlChannelFuzzer.run(input)
        }
    }
}
