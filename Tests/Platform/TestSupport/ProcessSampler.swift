import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a process (or a process and its descendants) holds at one moment, read from /proc: for soak runs that
/// watch processes for hours and fit their growth.
public struct ProcessSample: Sendable, Equatable {
    /// Resident memory, KiB (VmRSS; summed over a tree, so pages shared between its processes count twice).
    public var rssKiB: Int
    /// Open file descriptors.
    public var descriptors: Int
    /// Threads.
    public var threads: Int
    /// CPU time used so far (user + system), seconds.
    public var cpuSeconds: Double
    /// The processes counted (1 without descendants).
    public var processes: Int

    public init(rssKiB: Int, descriptors: Int, threads: Int, cpuSeconds: Double, processes: Int) {
        self.rssKiB = rssKiB
        self.descriptors = descriptors
        self.threads = threads
        self.cpuSeconds = cpuSeconds
        self.processes = processes
    }

    /// Reads process `pid`, and with `descendants` every process below it too; nil when `pid` no longer exists.
    public static func read(_ pid: Int32, descendants: Bool = false) -> ProcessSample? {
        guard var total = readOne(pid) else { return nil }
        guard descendants else { return total }
        for child in descendantsOf(pid) {
            guard let sample = readOne(child) else { continue }  // it exited meanwhile
            total.rssKiB += sample.rssKiB
            total.descriptors += sample.descriptors
            total.threads += sample.threads
            total.cpuSeconds += sample.cpuSeconds
            total.processes += 1
        }
        return total
    }

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    private static func readOne(_ pid: Int32) -> ProcessSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        else { return nil }
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
                ?? 0
        }
        // After the command's closing parenthesis: state is field 3, utime and stime fields 14 and 15.
        let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
        let ticks = fields.count > 13 ? (Double(fields[12]) ?? 0) + (Double(fields[13]) ?? 0) : 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? 0
        return ProcessSample(
            rssKiB: field("VmRSS"), descriptors: descriptors, threads: field("Threads"),
            cpuSeconds: ticks / ticksPerSecond, processes: 1)
    }

    /// Every process below `pid` (children, their children, …).
    static func descendantsOf(_ pid: Int32) -> [Int32] {
        var children: [Int32: [Int32]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { children[parent, default: []].append(child) }
        }
        var found: [Int32] = []
        var queue = children[pid] ?? []
        while let next = queue.popLast() {
            found.append(next)
            queue += children[next] ?? []
        }
        return found
    }
}

/// A least-squares line through points: the growth rate of a figure sampled over a long run.
public struct LinearFit: Sendable, Equatable {
    /// Change per unit of x.
    public var slope: Double
    public var intercept: Double

    /// The line through `points` (x, y); nil for fewer than 3 points or when every x is the same.
    public init?(_ points: [(x: Double, y: Double)]) {
        guard points.count >= 3 else { return nil }
        let n = Double(points.count)
        let meanX = points.map(\.x).reduce(0, +) / n
        let meanY = points.map(\.y).reduce(0, +) / n
        let sxx = points.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        guard sxx > 0 else { return nil }
        let sxy = points.map { ($0.x - meanX) * ($0.y - meanY) }.reduce(0, +)
        slope = sxy / sxx
        intercept = meanY - slope * meanX
    }
}
