/// Comparisons whose running time does not depend on the contents compared.
public enum ConstantTime {
    /// Compares two byte sequences in time that depends only on their lengths.
    /// - Returns: true when both have the same length and the same bytes.
    public static func equals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs, rhs) {
            difference |= a ^ b
        }
        return difference == 0
    }
}
