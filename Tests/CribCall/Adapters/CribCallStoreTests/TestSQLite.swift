import TestSupport

/// Reads a database file with the independent `sqlite3` command-line tool, to check what is really on disk.
enum TestSQLite {
    /// Runs one SQL statement and returns its output without the trailing newline.
    static func query(_ path: String, _ sql: String) async throws -> String {
        let result = try await Subprocess.run("sqlite3", ["-readonly", path, sql])
        precondition(result.status == 0, "sqlite3 failed: \(result.stderrText)")
        var text = result.stdoutText
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
