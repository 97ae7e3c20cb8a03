import Synchronization
import TestSupport
import Testing

@Suite("HeavyTestGate: heavy tests never ask for more cores than the machine has")
struct HeavyTestGateTests {
    /// Twenty tests of 0.25 to 2 cores on a 2-core gate: never more than 2 cores held at once, and all run.
    @Test func neverOverCapacity() async throws {
        let gate = HeavyTestGate(cores: 2)
        let load = Load()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                let cores = [0.25, 1, 2, 0.5, 1.5][index % 5]
                group.addTask {
                    try await gate.run(cores: cores) {
                        load.add(cores)
                        try await Task.sleep(for: .milliseconds(5))
                        load.add(-cores)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(load.peak <= 2)
        #expect(load.peak >= 1)
        #expect(load.runs == 20)
    }

    /// First come, first served: a 2-core test waiting behind a 1-core one is not overtaken by later 1-core tests
    /// (otherwise a stream of small tests could starve it).
    @Test func aWideTestIsNotOvertaken() async throws {
        let gate = HeavyTestGate(cores: 2)
        let order = Order()
        let holding = AsyncStream.makeStream(of: Void.self)
        let release = AsyncStream.makeStream(of: Void.self)
        let first = Task {
            try await gate.run(cores: 1) {
                order.append("first")
                holding.continuation.yield()
                for await _ in release.stream { break }
            }
        }
        for await _ in holding.stream { break }
        let wide = Task { try await gate.run(cores: 2) { order.append("wide") } }
        try await Task.sleep(for: .milliseconds(50))  // the wide one is queued (one core is held)
        let late = Task { try await gate.run(cores: 1) { order.append("late") } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(order.items == ["first"], "the late 1-core test must wait behind the queued 2-core one")
        release.continuation.yield()
        try await first.value
        try await wide.value
        try await late.value
        #expect(order.items == ["first", "wide", "late"])
    }

    /// A gated test inside a gated suite does not wait for cores it already holds (that would deadlock).
    @Test func nestedRunsDoNotWaitTwice() async throws {
        let gate = HeavyTestGate(cores: 2)
        let order = Order()
        try await gate.run(cores: 2) {
            try await HeavyTestGate.shared.run(cores: 2) { order.append("inner") }
        }
        #expect(order.items == ["inner"])
    }
}

private final class Load: Sendable {
    private let state = Mutex((current: 0.0, peak: 0.0, runs: 0))

    func add(_ cores: Double) {
        state.withLock {
            $0.current += cores
            $0.peak = max($0.peak, $0.current)
            if cores > 0 { $0.runs += 1 }
        }
    }

    var peak: Double { state.withLock { $0.peak } }
    var runs: Int { state.withLock { $0.runs } }
}

private final class Order: Sendable {
    private let state = Mutex<[String]>([])
    func append(_ item: String) { state.withLock { $0.append(item) } }
    var items: [String] { state.withLock { $0 } }
}
