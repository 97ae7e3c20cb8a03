/// A GStreamer pipeline that cannot be built or run, with what to do about it.
public struct GStreamerError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// GStreamer itself does not initialise.
        case unavailable
        /// Element factories are not installed (see ``GStreamerError/missing``).
        case missingElements
        /// A pipeline could not be created, assembled or linked.
        case pipeline
    }

    public var code: Code
    public var message: String
    /// For ``Code/missingElements``: which, and the packages that provide them.
    public var missing: MissingElements?

    public init(code: Code, message: String, missing: MissingElements? = nil) {
        self.code = code
        self.message = message
        self.missing = missing
    }

    /// Elements that are not installed.
    public init(_ missing: MissingElements) {
        self.init(
            code: .missingElements,
            message: "the GStreamer \(missing.subject) not installed: install "
                + "\(missing.packages.joined(separator: " and ")) (e.g. apt-get install "
                + "\(missing.packages.joined(separator: " ")))",
            missing: missing
        )
    }

    public var description: String { message }
}
