import ArgumentParser
import CribCallStore
import DeviceIdentityStore
import Foundation
import Logging

/// `--data-dir`, shared by every command that uses the device's data directory (identity files and
/// `cribcall.sqlite`). The management commands (`listeners`, `settings`, `pairing`) only touch the database, so they
/// work from another terminal while `cribcall monitor` runs with the same data directory.
struct DataDirectoryOption: ParsableArguments {
    @Option(name: .long, help: "Data directory (default: $XDG_DATA_HOME/cribcall or ~/.local/share/cribcall).")
    var dataDir: String?

    /// The chosen data directory; it may not exist yet.
    var url: URL {
        dataDir.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DataDirectory.defaultURL(product: "cribcall")
    }

    /// The database file inside ``url``.
    var databaseURL: URL {
        url.appendingPathComponent(CribCallDatabase.fileName)
    }

    /// Opens the database for a read-only command, or returns nil when it does not exist yet.
    ///
    /// Creates nothing: a missing directory or database means "nothing stored yet".
    func existingDatabase() throws -> CribCallDatabase? {
        guard FileManager.default.fileExists(atPath: databaseURL.path) else { return nil }
        return try CribCallDatabase(directory: url)
    }

    /// Opens the database for a command that writes, creating the directory (mode 0700) and the file as needed.
    func databaseCreatingIfNeeded() throws -> CribCallDatabase {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try CribCallDatabase(directory: url)
    }
}

/// A failure of a management command: printed to stderr as `cribcall <command>: <message>`, then exit status 1.
struct CommandFailure: Error {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}

extension ParsableCommand {
    /// Runs `body`; a ``CommandFailure`` or any other error (for example a store error) becomes one line on stderr
    /// prefixed with the command name, and exit status 1.
    ///
    /// - Parameter command: The command words, e.g. `listeners revoke`.
    func reportingFailures(_ command: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as CommandFailure {
            Logger(label: "cribcall \(command)").error("\(error.message)")
            throw ExitCode.failure
        } catch let error as ExitCode {
            throw error
        } catch {
            Logger(label: "cribcall \(command)").error("\(error)")
            throw ExitCode.failure
        }
    }
}

extension AsyncParsableCommand {
    /// The async form of ``ParsableCommand/reportingFailures(_:_:)``: failures become one line on stderr (no usage
    /// text: the arguments were fine, the world was not) and exit status 1.
    func reportingFailures(_ command: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as CommandFailure {
            Logger(label: "cribcall \(command)").error("\(error.message)")
            throw ExitCode.failure
        } catch let error as ExitCode {
            throw error
        } catch let error as ValidationError {
            throw error
        } catch {
            Logger(label: "cribcall \(command)").error("\(error)")
            throw ExitCode.failure
        }
    }
}
