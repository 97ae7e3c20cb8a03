/// Why an identity could not be created or loaded.
///
/// The message says what is wrong and what to do; it never contains key material.
public struct DeviceIdentityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// The private key could not be parsed or is not of the expected type.
        public static let invalidPrivateKey = Code(name: "invalidPrivateKey")
        /// The certificate could not be parsed, or it does not have the shape PROTOCOL.md §1 requires.
        public static let invalidCertificate = Code(name: "invalidCertificate")
        /// The certificate was not issued for the private key it is stored with.
        public static let keyMismatch = Code(name: "keyMismatch")
        /// The certificate could not be built (an internal failure of the X.509 library).
        public static let certificateCreationFailed = Code(name: "certificateCreationFailed")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
