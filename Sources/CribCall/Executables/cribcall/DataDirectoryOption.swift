import ArgumentParser
import CribCallApp
import CribCallRuntime
import Logging

/// `--data-dir`, shared by every command that uses the device's data directory.
struct DataDirectoryOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(CribCallDataDirectory.help))
    var dataDir: String?

    var directory: CribCallDataDirectory { CribCallDataDirectory(path: dataDir) }
}

/// How a ``CommandFailure`` (or any other error) reaches the command line: bad arguments with the usage text, a
/// failure as one line on stderr prefixed with the command name (no usage text: the arguments were fine, the world
/// was not) and its exit status. A ``CribCallRuntimeError`` is a usage error when what was asked cannot work.
func commandLineError(_ error: any Error, command: String) -> any Error {
    switch error {
    case let failure as CribCallRuntimeError where failure.code == .invalidRequest:
        return ValidationError(failure.message)
    case let failure as CribCallRuntimeError:
        Logger(label: "cribcall \(command)").error("\(failure.message)")
        return ExitCode.failure
    case let failure as CommandFailure:
        switch failure.kind {
        case .usage:
            return ValidationError(failure.message)
        case .failure(let status):
            Logger(label: "cribcall \(command)").error("\(failure.message)")
            return ExitCode(status)
        }
    case is ExitCode, is ValidationError:
        return error
    default:
        Logger(label: "cribcall \(command)").error("\(error)")
        return ExitCode.failure
    }
}

/// Runs a command's work; its failure reaches the command line as ``commandLineError(_:command:)`` says.
func reportingFailures<T>(_ command: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw commandLineError(error, command: command)
    }
}

/// The synchronous form of ``reportingFailures(_:_:)``.
func reportingFailures<T>(_ command: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw commandLineError(error, command: command)
    }
}
