/// Why a unit could not be rendered or installed. ``message`` is one line that says what to do.
public struct SystemdUnitError: Error, Hashable, CustomStringConvertible {
    /// What kind of failure it is; compare against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidCommand, unitExists, writeFailed
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The command cannot be expressed in a unit (relative path, control characters, `$` in the path…).
        public static let invalidCommand = Self(.invalidCommand)
        /// A different unit file is already installed and `force` was not given.
        public static let unitExists = Self(.unitExists)
        /// The unit directory or file could not be written.
        public static let writeFailed = Self(.writeFailed)

        public var description: String { base.rawValue }
    }

    /// What kind of failure it is.
    public var code: Code
    /// What happened and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
