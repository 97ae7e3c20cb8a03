import Foundation

struct FixtureFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Word error rate: word-level edit distance over the reference's word count.
func wordErrorRate(reference: String, hypothesis: String) -> Double {
    let ref = reference.lowercased().split(separator: " ")
    let hyp = hypothesis.lowercased().split(separator: " ")
    guard !ref.isEmpty else { return hyp.isEmpty ? 0 : 1 }
    var previous = Array(0...hyp.count)
    for i in 1...ref.count {
        var current = [i] + [Int](repeating: 0, count: hyp.count)
        for j in stride(from: 1, through: hyp.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref[i - 1] == hyp[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return Double(previous[hyp.count]) / Double(ref.count)
}
