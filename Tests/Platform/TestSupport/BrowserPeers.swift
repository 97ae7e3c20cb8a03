import Foundation
import Testing

extension InteropPeers {
    /// Debian's Chromium and its chromedriver, what every browser walk drives (make test installs both).
    public static let chromium = "/usr/bin/chromium"
    public static let chromedriver = "/usr/bin/chromedriver"

    /// The venv's Python (with Selenium) once Chromium, chromedriver and the venv are there; otherwise records why
    /// (never a silent skip) and returns nil.
    public static func browserPython() -> String? {
        for path in [chromium, chromedriver] where !FileManager.default.isExecutableFile(atPath: path) {
            Issue.record("\(path) is missing: apt-get install chromium chromium-driver (the browser tests need both)")
            return nil
        }
        guard let python else {
            Issue.record("the Python venv is missing: run `make test` (it installs selenium==4.51.0 into .venv)")
            return nil
        }
        return python
    }
}
