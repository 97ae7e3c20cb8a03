public import Foundation

/// Where a product keeps its data on disk (ARCHITECTURE.md, "Data on disk"):
/// `$XDG_DATA_HOME/<product>`, else `~/.local/share/<product>`; `--data-dir` overrides it.
public enum DataDirectory {
    /// The default data directory of a product.
    /// - Parameters:
    ///   - product: The product name, e.g. `cribcall`.
    ///   - environment: The process environment (injected so tests can vary it).
    /// - Returns: The directory URL; it may not exist yet.
    public static func defaultURL(
        product: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent(product, isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home)
            .appendingPathComponent(".local/share", isDirectory: true)
            .appendingPathComponent(product, isDirectory: true)
    }
}
