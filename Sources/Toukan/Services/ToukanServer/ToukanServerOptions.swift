import DeviceIdentityStore
import Foundation
import Postgres

/// What `toukan-server` was asked for, checked here so the executable only parses arguments.
public struct ToukanServerOptions: Sendable, Hashable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (reported on the ready line).
    public var port = 8090
    /// Memories, audio files, tus uploads and (by default) the job queue. Nil: `$XDG_DATA_HOME/toukan-server`.
    public var dataDirectory: String?
    /// `postgres://…` for memories, tus uploads and jobs shared by several server processes; nil: SQLite files in the
    /// data directory.
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
            do {
                _ = try PostgresURL(database)
            } catch {
                throw Invalid(description: "--database: \(error.message)")
            }
        }
    }

    /// The data directory to use.
    public var resolvedDataDirectory: String {
        dataDirectory ?? DataDirectory.defaultURL(product: "toukan-server").path
    }
}
