/// A strict JSON parser for RFC 8785 input: the RFC 8259 grammar plus the I-JSON rules of RFC 7493.
///
/// It accepts exactly well-formed UTF-8 JSON text without a byte order mark, any value at the top level,
/// and rejects duplicate member names, lone surrogate escapes, numbers that overflow a double (unless
/// `numberRange` is `.unlimited`), nesting deeper than `Limits.maxDepth` and input longer than
/// `Limits.maxBytes`. Every number keeps its literal (`JSONNumber.literal`). Parsing is iterative (an explicit
/// stack, no recursion) and linear in the input size.
public struct JSONParser: Sendable {
    /// Which numbers the parser accepts; both follow the RFC 8259 grammar exactly.
    public enum NumberRange: Sendable, Hashable {
        /// Only numbers that round to a finite double, as I-JSON (RFC 7493 §2.2) and so RFC 8785 require: `1e400`
        /// is refused as `numberNotFinite`. The default.
        case finiteDoubles
        /// Numbers of any magnitude: `1e400` is accepted with its literal (its `doubleValue` is infinite, which the
        /// canonical form writes as `null`). For documents that are forwarded as written rather than canonicalized.
        case unlimited
    }

    /// Resource limits applied to every parse.
    public struct Limits: Sendable, Hashable {
        /// The deepest allowed nesting of arrays and objects; a scalar at the top level has depth 0.
        ///
        /// Parsing itself never recurses, but serializing, comparing and destroying a `JSONValue` do, one stack
        /// frame per level; keep this in the low thousands at most.
        public var maxDepth: Int = 64
        /// The longest accepted input, in bytes.
        public var maxBytes: Int = 1 << 20

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maxDepth: The deepest allowed nesting of arrays and objects (default 64).
        ///   - maxBytes: The longest accepted input in bytes (default 1 MiB).
        public init(maxDepth: Int = 64, maxBytes: Int = 1 << 20) {
            self.maxDepth = maxDepth
            self.maxBytes = maxBytes
        }
    }

    /// The limits this parser enforces.
    public var limits: Limits
    /// Which numbers this parser accepts.
    public var numberRange: NumberRange

    /// Creates a parser.
    ///
    /// - Parameters:
    ///   - limits: The resource limits to enforce.
    ///   - numberRange: Which numbers to accept (default: finite doubles only, as RFC 8785 requires).
    public init(limits: Limits = .init(), numberRange: NumberRange = .finiteDoubles) {
        self.limits = limits
        self.numberRange = numberRange
    }

    /// Parses one JSON text.
    ///
    /// `[UInt8]` and `ArraySlice<UInt8>` are read in place; other collections (`Data`, `String.UTF8View`, ...)
    /// are copied into an array once. Offsets in errors count from the collection's first byte.
    ///
    /// - Parameter bytes: The UTF-8 encoded JSON text.
    /// - Returns: The parsed value.
    /// - Throws: `JSONParseError` describing the first problem found and its byte offset.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let count = bytes.count
        guard count <= limits.maxBytes else {
            throw JSONParseError(
                code: .tooLarge,
                offset: limits.maxBytes,
                message: "input of \(count) bytes exceeds the limit of \(limits.maxBytes) bytes "
                    + "at byte \(limits.maxBytes)"
            )
        }
        let input: ArraySlice<UInt8>
        if let array = bytes as? [UInt8] {
            input = array[...]
        } else if let slice = bytes as? ArraySlice<UInt8> {
            input = slice
        } else {
            input = Array(bytes)[...]
        }
        var engine = JSONParserEngine(input: input, maxDepth: limits.maxDepth, numberRange: numberRange)
        return try engine.parseDocument()
    }

    /// Parses one JSON text given as a Swift string (its UTF-8 encoding is parsed).
    ///
    /// - Parameter text: The JSON text.
    /// - Returns: The parsed value.
    /// - Throws: `JSONParseError` describing the first problem found and its UTF-8 byte offset.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(text.utf8)
    }
}
