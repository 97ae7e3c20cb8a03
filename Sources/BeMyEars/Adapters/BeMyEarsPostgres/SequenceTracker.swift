/// What a receiver knows of each sender's notice sequence: drops repeats and counts what went missing.
struct SequenceTracker {
    enum Verdict: Hashable {
        /// The next notice from this sender (or the first seen from it or from its new run).
        case next
        /// Seen before (a batch published twice): drop it.
        case duplicate
        /// `missed` notices from this sender never arrived.
        case gap(missed: UInt64)
    }

    /// Senders remembered at most (each live node is one; evicted nodes are forgotten).
    static let capacity = 4_096

    private var last: [String: (epoch: String, sequence: UInt64)] = [:]

    mutating func admit(source: String, epoch: String, sequence: UInt64) -> Verdict {
        guard let previous = last[source], previous.epoch == epoch else {
            if last.count >= Self.capacity { last.removeAll() }
            last[source] = (epoch, sequence)
            return .next
        }
        guard sequence > previous.sequence else { return .duplicate }
        last[source] = (epoch, sequence)
        return sequence == previous.sequence + 1 ? .next : .gap(missed: sequence - previous.sequence - 1)
    }

    mutating func forget(_ source: String) {
        last[source] = nil
    }
}
