/// Why pairing failed on this side, in words a person can act on.
public struct PairingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// The scanned code is not a valid CribCall pairing code.
        public static let invalidQRCode = Code(name: "invalidQRCode")
        /// The PIN typed is not 6 digits.
        public static let invalidPINFormat = Code(name: "invalidPINFormat")
        /// The monitor's proof did not verify: it is not the monitor that showed the code or PIN.
        public static let monitorNotAuthenticated = Code(name: "monitorNotAuthenticated")
        /// The monitor refused.
        public static let rejected = Code(name: "rejected")
        /// A message arrived that does not fit the current step.
        public static let unexpectedMessage = Code(name: "unexpectedMessage")
        /// The monitor sent a malformed pairing message.
        public static let malformedMessage = Code(name: "malformedMessage")
    }

    public var code: Code
    public var message: String
    /// The monitor's reason when `code` is `.rejected`.
    public var reason: PairRejected.Reason?

    public init(_ code: Code, _ message: String, reason: PairRejected.Reason? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    public var description: String { message }
}
