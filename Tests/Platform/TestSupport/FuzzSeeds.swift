import Foundation

/// The committed seeds of a fuzz target, and a deterministic stream of mutations of them, so `make test` checks a
/// fuzz harness's invariants on every run (the long randomized run is `make fuzz`).
public enum FuzzSeeds {
    /// The files of `Fuzz/<directory>`, in name order.
    public static func load(_ directory: String) throws -> [[UInt8]] {
        let url = Fixtures.repositoryRoot.appendingPathComponent("Fuzz/\(directory)")
        return try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().map {
            Array(try Data(contentsOf: url.appendingPathComponent($0)))
        }
    }

    /// `count` inputs, each a seed with one to four random byte changes, removals, insertions or duplications.
    public static func mutations(of seeds: [[UInt8]], count: Int, seed: UInt64) -> some Sequence<[UInt8]> {
        let seeds = seeds.filter { !$0.isEmpty }
        var random = SplitMix64(seed: seed)
        return (0..<(seeds.isEmpty ? 0 : count)).lazy.map { _ in
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
            return input
        }
    }
}
