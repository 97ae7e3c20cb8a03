/// Why a `cribcall` command could not do its work, as the command line shows it.
///
/// The executable turns it into its output: a ``Kind/usage`` failure is printed with the command's usage (the
/// arguments were wrong), a ``Kind/failure(status:)`` as one line on stderr, `cribcall <command>: <message>`, and
/// that exit status (the arguments were fine, the world was not).
public struct CommandFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The arguments cannot work: shown with the usage text, exit status 64.
        case usage
        /// The command failed: one line on stderr and this exit status.
        case failure(status: Int32)
    }

    public var message: String
    public var kind: Kind

    public init(_ message: String, kind: Kind = .failure(status: 1)) {
        self.message = message
        self.kind = kind
    }

    /// Bad arguments, found only when the command ran (e.g. `--open` names no paired monitor).
    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(message, kind: .usage)
    }

    public var description: String { message }
}
