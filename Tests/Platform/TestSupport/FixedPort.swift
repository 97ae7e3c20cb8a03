/// Ports for tests that stop a server and start it again on the same port.
///
/// A port the kernel chose (port 0) is in its ephemeral range (32768–60999), where any other test's socket bound to
/// port 0 may land between the stop and the restart, and the restart then cannot bind. Below that range, only a
/// port someone asked for by number can be taken.
public enum FixedPort {
    /// Runs `start` with random ports in 20000–29999 until one works (a taken port makes `start` throw), at most
    /// `attempts` times; the last attempt's error is thrown.
    public static func belowEphemeralRange<T>(
        attempts: Int = 20, _ start: (Int) async throws -> T
    ) async throws -> T {
        for _ in 1..<attempts {
            if let started = try? await start(Int.random(in: 20_000...29_999)) { return started }
        }
        return try await start(Int.random(in: 20_000...29_999))
    }
}
