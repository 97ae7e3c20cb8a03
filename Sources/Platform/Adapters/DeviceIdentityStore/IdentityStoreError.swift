/// Why the identity files could not be used. The message names the file and says what to do.
public struct IdentityStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// A file exists but does not hold a valid identity. It is never replaced automatically.
        public static let corrupt = Code(name: "corrupt")
        /// A private key file can be read by other users.
        public static let insecurePermissions = Code(name: "insecurePermissions")
        /// A file could not be read.
        public static let cannotRead = Code(name: "cannotRead")
        /// A file or directory could not be created.
        public static let cannotWrite = Code(name: "cannotWrite")
    }

    public var code: Code
    /// The file or directory concerned.
    public var path: String
    public var message: String

    public init(_ code: Code, path: String, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
