#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shared arithmetic of the release-built benchmarks (they print figures; nothing here asserts).

/// `duration` in milliseconds.
public func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// The `p` quantile (0…1) of `values` by nearest rank; NaN when there are none.
public func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// User plus system CPU time of the whole process so far, in seconds.
public func cpuSeconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine, whatever its network namespace,
/// so timestamps taken in two processes can be subtracted.
public func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// Why a benchmark could not measure, in words for the person running it.
public struct BenchmarkFailure: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// Runs one step of a benchmark. When it throws, prints one line saying which step failed and why, and exits with
/// status 1: a benchmark that cannot measure says so plainly (an error thrown at top level would crash the
/// program with a backtrace instead).
/// - Parameters:
///   - what: The step, as in "stream start latency" (the line reads "<program>: <what> failed: <error>").
public func benchmarkStep<T>(
    _ what: String,
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> T
) async -> T {
    do {
        return try await body()
    } catch {
        failBenchmark("\(what) failed: \(error)")
    }
}

/// ``benchmarkStep(_:_:)`` for a step that does not wait.
public func benchmarkStep<T>(_ what: String, _ body: () throws -> T) -> T {
    do {
        return try body()
    } catch {
        failBenchmark("\(what) failed: \(error)")
    }
}

/// Prints "<program>: <message>" on stderr and exits with status 1.
public func failBenchmark(_ message: String) -> Never {
    let program =
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) }
        ?? "benchmark"
    let line = Array("\(program): \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}
