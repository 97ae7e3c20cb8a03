import Foundation

/// Where blocking GStreamer work runs — a finite pipeline played to its end (a picture fitted, a file analysed or
/// remuxed), an input opened that waits for a device — on a fixed set of threads of the runner's own: never a
/// thread of the concurrency pool (which a blocking call would starve), and never a new thread per job (which a
/// burst of snapshot requests would turn into hundreds). Jobs beyond the threads wait their turn, first come first
/// served. Threads start when work first needs them and then stay, named after the runner (``name``).
///
/// `@unchecked Sendable`: every stored `var` is read and written only while `condition` is locked; the jobs
/// themselves are `@Sendable`.
public final class PipelineRunner: @unchecked Sendable {
    /// The process's runner: as many threads as cores, at least two (one long analysis never holds up every
    /// picture).
    public static let shared = PipelineRunner(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// How many jobs may run at once.
    public let width: Int
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    /// Where the next job is taken from (`jobs` is compacted when the head passes the middle).
    private var head = 0
    private var started = 0
    private var idle = 0
    private var running = 0
    private var mostRunning = 0

    /// The OS name of its threads (at most 15 bytes show), `gst-runner` for the shared one.
    public let name: String

    public init(threads: Int, name: String = "gst-runner") {
        precondition(threads > 0, "a runner needs a thread")
        width = threads
        self.name = name
    }

    /// Runs `body` on one of the runner's threads, after the jobs submitted before it once a thread is free.
    public func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<Value, Failure>, Never>) in
            submit { waiter.resume(returning: Result { () throws(Failure) in try body() }) }
        }
        return try result.get()
    }

    /// The threads the runner has started (never more than ``width``).
    public var threadCount: Int { locked { started } }

    /// The most jobs that ran at the same moment so far (never more than ``width``).
    public var peakConcurrency: Int { locked { mostRunning } }

    /// Jobs submitted and not yet taken by a thread.
    var queuedForTesting: Int { locked { jobs.count - head } }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = locked { () -> Bool in
            jobs.append(job)
            condition.signal()
            // More jobs waiting than threads waiting for one: another thread, while the runner may have one.
            guard jobs.count - head > idle, started < width else { return false }
            started += 1
            return true
        }
        guard startThread else { return }
        // Named from inside: Foundation on Linux gives the OS thread a name only when the thread names itself.
        Thread { [self] in
            Thread.current.name = name
            work()
        }.start()
    }

    /// A runner thread: takes the oldest job, runs it, and waits when there is none.
    private func work() {
        while true {
            let job = locked { () -> @Sendable () -> Void in
                while head == jobs.count {
                    idle += 1
                    condition.wait()
                    idle -= 1
                }
                let job = jobs[head]
                head += 1
                if head > 64, head * 2 > jobs.count {
                    jobs.removeFirst(head)
                    head = 0
                }
                running += 1
                mostRunning = max(mostRunning, running)
                return job
            }
            job()
            locked { running -= 1 }
        }
    }

    private func locked<Value>(_ body: () -> Value) -> Value {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
