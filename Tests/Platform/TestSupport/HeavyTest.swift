import Foundation
public import Testing

/// A test (or every test of a suite) that keeps cores busy: real browsers, aiortc, GStreamer encoders, several
/// server processes. Such tests run under a process-wide gate, so that together they never ask for more cores
/// than the machine has; pure unit tests are not gated and stay parallel.
///
/// Without the gate, Swift Testing starts every suite at once: on a 2-core machine two Chromiums, aiortc
/// decoding video and an x264 encoder then starve one another, and correct code misses its deadlines
/// (STYLE.md, "Tests on a 2-core machine"). A test waits for the gate before its body runs, so its own deadlines
/// never include the wait.
///
/// Use it on a suite (a `.serialized` suite is gated as a whole; otherwise each of its tests and each case of a
/// parameterized test is gated on its own) or on one test:
/// ```swift
/// @Suite(.serialized, .heavy(cores: 1, "two headless Chromiums and coturn"))
/// ```
/// `cores` is what the test keeps busy on average, measured alone on an idle machine (total CPU time over wall
/// time, rounded up to a quarter: most interop tests mostly wait for their peers). The gate admits tests while
/// their sum stays within the machine's cores.
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    /// How many cores the test keeps busy while it runs (a quarter at least).
    public var cores: Double
    /// What makes it heavy, for the reader.
    public var reason: Comment

    public var isRecursive: Bool { true }

    /// A `.serialized` suite holds its cores once, for all its tests (one runs at a time, and none waits at the
    /// back of the queue again between two of them); elsewhere each test, or each case of a parameterized test,
    /// holds them while it runs. A test inside a suite that holds cores does not wait again (see
    /// ``HeavyTestGate/run(cores:_:)``).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        if test.isSuite {
            return test.traits.contains { $0 is ParallelizationTrait } ? self : nil
        }
        return testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await HeavyTestGate.shared.run(cores: cores, function)
    }
}

extension Trait where Self == HeavyTestTrait {
    /// Runs the test under the process-wide gate for tests that keep `cores` cores busy.
    /// - Parameters:
    ///   - cores: The cores the test keeps busy on average (0.25 for a test that mostly waits for a peer process,
    ///     a daemon or a network namespace; 1 for two browsers; 1.5 for a PostgreSQL cluster under load).
    ///   - reason: What makes the test heavy.
    public static func heavy(cores: Double = 0.25, _ reason: Comment) -> Self {
        HeavyTestTrait(cores: cores, reason: reason)
    }
}

/// A FIFO counting semaphore over the machine's cores (at least 2), shared by every test target of the test
/// process, counted in thousandths of a core. FIFO, so a test that needs both cores is not overtaken forever by
/// tests that need less.
public actor HeavyTestGate {
    public static let shared = HeavyTestGate(cores: Double(max(2, ProcessInfo.processInfo.activeProcessorCount)))

    /// Whether the current task already holds cores (a gated suite whose test is gated too must not wait twice).
    @TaskLocal static var isHolding = false

    private let capacity: Int
    private var available: Int
    private var waiters: [(cores: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// A gate over `cores` cores.
    public init(cores: Double) {
        capacity = Self.milliCores(cores)
        available = capacity
    }

    private static func milliCores(_ cores: Double) -> Int { Int((cores * 1_000).rounded(.up)) }

    /// Runs `body` once `cores` cores are free, and frees them when it returns or throws.
    public func run(cores: Double, _ body: @Sendable () async throws -> Void) async throws {
        if Self.isHolding {
            try await body()
            return
        }
        let cores = min(max(Self.milliCores(cores), 250), capacity)
        await acquire(cores)
        defer { release(cores) }
        try await Self.$isHolding.withValue(true) {
            try await body()
        }
    }

    private func acquire(_ cores: Int) async {
        if waiters.isEmpty, available >= cores {
            available -= cores
            return
        }
        await withCheckedContinuation { waiters.append((cores, $0)) }
    }

    private func release(_ cores: Int) {
        available += cores
        while let first = waiters.first, available >= first.cores {
            available -= first.cores
            waiters.removeFirst()
            first.continuation.resume()
        }
    }
}
