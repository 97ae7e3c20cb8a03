/// Why a multipart/form-data body was refused. The server answers 400 (413 for `.bodyTooLarge`, 415 for
/// `.notMultipart`) with the message and stores nothing.
public struct MultipartError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The Content-Type is not multipart/form-data.
        public static let notMultipart = Code("notMultipart")
        /// The Content-Type has no boundary parameter.
        public static let missingBoundary = Code("missingBoundary")
        /// The boundary is not one RFC 2046 allows.
        public static let invalidBoundary = Code("invalidBoundary")
        /// The body does not contain the boundary where it should (within the preamble limit).
        public static let boundaryNotFound = Code("boundaryNotFound")
        /// A boundary is followed by something other than `--`, padding and a line break.
        public static let malformedDelimiter = Code("malformedDelimiter")
        /// A part's headers are longer than the limit.
        public static let headerTooLarge = Code("headerTooLarge")
        /// A part has more header fields than the limit.
        public static let tooManyHeaders = Code("tooManyHeaders")
        /// A header line is not `Name: value`, or Content-Disposition is not form-data with a name.
        public static let malformedHeader = Code("malformedHeader")
        /// More parts than the limit.
        public static let tooManyParts = Code("tooManyParts")
        /// The parts' bytes exceed the limit.
        public static let bodyTooLarge = Code("bodyTooLarge")
        /// The body ended before the closing boundary.
        public static let truncated = Code("truncated")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
