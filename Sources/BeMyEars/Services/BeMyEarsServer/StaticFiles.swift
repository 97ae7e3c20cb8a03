import Foundation
import LocalWebApp

/// The browser client (`Public/`: index.html, app.js, style.css), read once at start-up and served from memory
/// (LocalWebApp's ``StaticAssets``: only files that exist in the directory are routes).
enum StaticFiles {
    /// The bundled client (`Public/` copied into the target's resources).
    /// - Throws: ``ServerStartupError`` when the client is missing or incomplete.
    static func bundled() throws -> StaticAssets {
        guard let resources = Bundle.module.resourceURL else {
            throw ServerStartupError("the BeMyEarsServer resource bundle is missing: rebuild bemyears-server")
        }
        do {
            return try StaticAssets(directory: resources.appendingPathComponent("Public"))
        } catch {
            throw ServerStartupError(
                "\(error.description) (`swift build --product bemyears-server` copies "
                    + "Sources/BeMyEars/Services/BeMyEarsServer/Public)")
        }
    }
}
