import Foundation

enum URLHelper {
    static let directory = URL(fileURLWithPath: "/tmp/recordings", isDirectory: true)
}
