import DeviceIdentityStore
import Foundation

/// What `toukan-server` was asked for, checked here so the executable only parses arguments.
public struct ToukanServerOptions: Sendable, Hashable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (reported on the ready line).
    public var port = 8090
    /// Memories, audio files, tus uploads and (by default) the job queue. Nil: `$XDG_DATA_HOME/toukan-server`.
    public var dataDirectory: String?
    /// `postgres://…` for the job queue shared by several server processes; nil: SQLite in the data directory.
    public var database: String?
    /// One JSON object per line on stdout.
    public var json = false
    /// The largest upload accepted, in bytes (a declared Content-Length above it is refused before reading).
    public var maximumUploadBytes: Int64 = 2 << 30
    /// Processing workers in this process (0: this process only receives uploads).
    public var workers = 1
    /// Transcribe with PocketSphinx.
    public var transcribe = true

    public init() {}

    /// Why the options cannot work, in a sentence that says what to pass instead.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// - Throws: ``Invalid`` naming the option and what it needs.
    public func validate() throws(Invalid) {
        guard (0...65_535).contains(port) else {
            throw Invalid(description: "--port must be 0...65535 (0 picks a free port)")
        }
        guard maximumUploadBytes > 0 else { throw Invalid(description: "--max-upload-bytes must be positive") }
        guard (0...64).contains(workers) else { throw Invalid(description: "--workers must be 0...64") }
        if let database {
            let lowered = database.lowercased()
            guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else {
                throw Invalid(description: "--database must be postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
            }
        }
    }

    /// The data directory to use.
    public var resolvedDataDirectory: String {
        dataDirectory ?? DataDirectory.defaultURL(product: "toukan-server").path
    }
}
