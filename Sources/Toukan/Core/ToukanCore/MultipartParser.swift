/// What the multipart parser found in the bytes fed so far.
public enum MultipartEvent: Sendable, Hashable {
    /// A part begins, with these headers.
    case part(MultipartPartHeaders)
    /// Bytes of the current part's body, in order. A slice of the chunk that was fed (its indices are the byte
    /// range in that chunk, nothing copied), or of the delimiter's first bytes, held back at the end of the previous
    /// chunk until they turned out to be body.
    case body(ArraySlice<UInt8>)
    /// The current part is complete.
    case partEnd
    /// The closing delimiter: the body is complete; anything after it (the epilogue) is ignored.
    case end
}

/// An incremental, bounded multipart/form-data parser (RFC 2046 §5.1, RFC 7578) for a server that streams uploads
/// to disk: feed it chunks as they arrive, write the body slices it returns, and call `finish()` at the end of the
/// request. Memory stays bounded by the limits whatever the input: only a part's header block (≤ `maxHeaderBytes`)
/// is ever buffered; body bytes are passed through.
///
/// Strict where it matters: CRLF line breaks, a Content-Disposition of form-data with a name on every part, no
/// obsolete header folding, nothing but `--` or padding and CRLF after a boundary. A preamble is allowed (up to
/// `maxPreambleBytes`), the epilogue is ignored.
public struct MultipartParser: Sendable {
    public struct Limits: Sendable, Hashable {
        /// One part's header block, in bytes.
        public var maxHeaderBytes: Int
        /// Header fields in one part.
        public var maxHeaderCount: Int
        /// Parts in the body.
        public var maxParts: Int
        /// Bytes before the first boundary.
        public var maxPreambleBytes: Int
        /// The parts' body bytes, all together (the server's largest upload).
        public var maxBodyBytes: Int64

        public init(
            maxHeaderBytes: Int = 8_192, maxHeaderCount: Int = 16, maxParts: Int = 8, maxPreambleBytes: Int = 1_024,
            maxBodyBytes: Int64 = .max
        ) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxParts = maxParts
            self.maxPreambleBytes = maxPreambleBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    private enum State: Sendable {
        /// Looking for the delimiter: in a part's body (its bytes are body) or in the preamble (discarded).
        case scanning(inPart: Bool)
        /// After a delimiter: `--` closes, padding then CRLF starts the next part.
        case afterDelimiter(inPart: Bool, padding: Int)
        case closing(inPart: Bool)
        case lineFeed(inPart: Bool)
        /// Collecting a part's header block.
        case headers
        /// After the closing delimiter.
        case epilogue
        case failed(MultipartError)
    }

    public let boundary: String
    public let limits: Limits
    /// `CRLF--boundary`.
    private let delimiter: [UInt8]
    /// The KMP failure function of `delimiter`.
    private let fallback: [Int]
    private var state: State = .scanning(inPart: false)
    /// How many bytes at the end of the input seen so far match the start of `delimiter` (the body or preamble
    /// bytes not yet known to be either). The input is read as if it began with CRLF, so a body that starts with
    /// its boundary needs no preamble.
    private var matched = 2
    private var header: [UInt8] = []
    private var preambleBytes = 0
    private var bodyBytes: Int64 = 0
    private var partBytes: Int64 = 0
    private var parts = 0
    private var partName = ""

    /// - Throws: `.invalidBoundary`.
    public init(boundary: String, limits: Limits = Limits()) throws(MultipartError) {
        try MultipartBoundary.validate(boundary)
        self.boundary = boundary
        self.limits = limits
        delimiter = Array("\r\n--\(boundary)".utf8)
        var fallback = [Int](repeating: 0, count: delimiter.count)
        var length = 0
        for index in 1..<delimiter.count {
            while length > 0 && delimiter[index] != delimiter[length] { length = fallback[length - 1] }
            if delimiter[index] == delimiter[length] { length += 1 }
            fallback[index] = length
        }
        self.fallback = fallback
    }

    /// A parser for the boundary of a request's Content-Type.
    /// - Throws: `.notMultipart`, `.missingBoundary`, `.invalidBoundary`.
    public init(contentType: String, limits: Limits = Limits()) throws(MultipartError) {
        try self.init(boundary: MultipartBoundary.fromContentType(contentType), limits: limits)
    }

    /// Whether the closing delimiter has been read.
    public var isComplete: Bool {
        if case .epilogue = state { return true }
        return false
    }

    /// Parses the next chunk of the body.
    /// - Returns: What it contained, in order.
    /// - Throws: `MultipartError`; the parser then stays failed and throws it again.
    public mutating func feed(_ chunk: [UInt8]) throws(MultipartError) -> [MultipartEvent] {
        if case .failed(let error) = state { throw error }
        do {
            var events: [MultipartEvent] = []
            var index = chunk.startIndex
            while index < chunk.endIndex {
                if case .scanning(let inPart) = state {
                    index = try scan(chunk, from: index, inPart: inPart, into: &events)
                } else {
                    try step(chunk[index], into: &events)
                    index += 1
                }
            }
            return events
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// The request's body ended.
    /// - Throws: `.truncated` (or `.boundaryNotFound`) unless the closing delimiter was read.
    public mutating func finish() throws(MultipartError) {
        switch state {
        case .epilogue: return
        case .failed(let error): throw error
        case .scanning(inPart: false):
            throw MultipartError(.boundaryNotFound, "the body never contains its boundary --\(boundary)")
        case .headers:
            throw MultipartError(.truncated, "the body ended inside the headers of part \(parts)")
        default:
            let place =
                parts == 0 ? "before the first part" : "in part \(partName.debugDescription) after \(partBytes) bytes"
            throw MultipartError(.truncated, "the body ended \(place), before the closing boundary: truncated")
        }
    }

    /// Runs the delimiter search over `chunk` from `start`; returns where it stopped (after a delimiter, or the end).
    private mutating func scan(_ chunk: [UInt8], from start: Int, inPart: Bool, into events: inout [MultipartEvent])
        throws(MultipartError) -> Int
    {
        let held = matched
        var length = matched
        var index = start
        while index < chunk.endIndex {
            let byte = chunk[index]
            while length > 0 && delimiter[length] != byte { length = fallback[length - 1] }
            if delimiter[length] == byte { length += 1 }
            index += 1
            if length == delimiter.count {
                try confirm(held + (index - start) - length, held: held, chunk[start...], inPart: inPart, &events)
                matched = 0
                state = .afterDelimiter(inPart: inPart, padding: 0)
                return index
            }
        }
        try confirm(held + (index - start) - length, held: held, chunk[start...], inPart: inPart, &events)
        matched = length
        return index
    }

    /// `count` bytes of what was held back followed by `run` are now known not to start a delimiter: body (in a
    /// part) or preamble.
    private mutating func confirm(
        _ count: Int, held: Int, _ run: ArraySlice<UInt8>, inPart: Bool, _ events: inout [MultipartEvent]
    ) throws(MultipartError) {
        guard count > 0 else { return }
        guard inPart else {
            preambleBytes += count
            guard preambleBytes <= limits.maxPreambleBytes + 2 else {
                throw MultipartError(
                    .boundaryNotFound,
                    "no boundary --\(boundary) in the first \(limits.maxPreambleBytes) bytes: wrong boundary, or not "
                        + "a multipart body")
            }
            return
        }
        bodyBytes += Int64(count)
        partBytes += Int64(count)
        guard bodyBytes <= limits.maxBodyBytes else {
            throw MultipartError(.bodyTooLarge, "the upload is larger than \(limits.maxBodyBytes) bytes")
        }
        let fromHeld = min(count, held)
        if fromHeld > 0 { events.append(.body(delimiter[0..<fromHeld])) }
        if count > fromHeld { events.append(.body(run.prefix(count - fromHeld))) }
    }

    /// One byte outside the delimiter search.
    private mutating func step(_ byte: UInt8, into events: inout [MultipartEvent]) throws(MultipartError) {
        switch state {
        case .afterDelimiter(let inPart, let padding):
            switch byte {
            case 0x2D: state = .closing(inPart: inPart)
            case 0x0D: state = .lineFeed(inPart: inPart)
            case 0x20, 0x09:
                // RFC 2046 transport padding, bounded.
                guard padding < 64 else { throw malformedDelimiter }
                state = .afterDelimiter(inPart: inPart, padding: padding + 1)
            default: throw malformedDelimiter
            }
        case .closing(let inPart):
            guard byte == 0x2D else { throw malformedDelimiter }
            if inPart { events.append(.partEnd) }
            guard parts > 0 else {
                throw MultipartError(.malformedHeader, "the body closes without any part")
            }
            events.append(.end)
            state = .epilogue
        case .lineFeed(let inPart):
            guard byte == 0x0A else { throw malformedDelimiter }
            if inPart { events.append(.partEnd) }
            parts += 1
            guard parts <= limits.maxParts else {
                throw MultipartError(.tooManyParts, "more than \(limits.maxParts) parts")
            }
            header.removeAll(keepingCapacity: true)
            state = .headers
        case .headers:
            header.append(byte)
            guard header.count <= limits.maxHeaderBytes + 2 else {
                throw MultipartError(
                    .headerTooLarge, "the headers of part \(parts) are longer than \(limits.maxHeaderBytes) bytes")
            }
            let blockEnd: Int
            if header == [0x0D, 0x0A] {
                blockEnd = 0
            } else if header.count >= 4, header.suffix(4).elementsEqual([0x0D, 0x0A, 0x0D, 0x0A]) {
                blockEnd = header.count - 4
            } else {
                return
            }
            let headers = try MultipartPartHeaders(block: header[0..<blockEnd], maxCount: limits.maxHeaderCount)
            partName = headers.name
            partBytes = 0
            events.append(.part(headers))
            header.removeAll(keepingCapacity: false)
            // The delimiter's own CRLF ends the body, so the search starts from nothing held.
            matched = 0
            state = .scanning(inPart: true)
        case .epilogue:
            return
        case .scanning, .failed:
            preconditionFailure("step(_:) runs outside the delimiter search")
        }
    }

    private var malformedDelimiter: MultipartError {
        MultipartError(.malformedDelimiter, "boundary --\(boundary) is not followed by `--` or a line break")
    }
}
