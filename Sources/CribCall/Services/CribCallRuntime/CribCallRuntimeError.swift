/// Why a CribCall device's work (pairing, forgetting a monitor, finding a paired device) could not be done, for
/// any program that is a CribCall device: `cribcall`'s commands and the Argus hub each show it their own way. The
/// message says what to do.
public struct CribCallRuntimeError: Error, Sendable, Hashable {
    /// What went wrong, for code that reacts to it (a command line shows ``invalidRequest`` with its usage).
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// What was asked cannot work as given (a PIN that is not 6 digits, an address without a port, neither
        /// a QR code nor a PIN): ask again differently.
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// No paired device has the id or name given.
        public static let unknownDevice = Code(rawValue: "unknownDevice")
        /// The id prefix or name given matches several paired devices.
        public static let ambiguous = Code(rawValue: "ambiguous")
        /// The monitor to pair with was not found on the LAN, or the LAN could not be searched.
        public static let notFound = Code(rawValue: "notFound")
        /// The PIN given was wrong (the monitor counts the try).
        public static let wrongPIN = Code(rawValue: "wrongPIN")
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do about it, for people.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension CribCallRuntimeError: CustomStringConvertible {
    public var description: String { message }
}
