import ToukanCore

/// The body of the upload-parsers fuzz target: arbitrary bytes as a multipart/form-data body (fed whole and in
/// chunks the input chooses), as a file inside a well-formed upload body, as a tus `Upload-Metadata` header and as
/// the first bytes of an upload. A violated invariant traps, which libFuzzer reports with the input.
public enum UploadParsersFuzzer {
    static let boundary = "fuzz-boundary-7Hq2"

    /// Runs one input.
    public static func run(_ bytes: [UInt8]) {
        checkChunkingDoesNotMatter(bytes)
        checkFileRoundTrip(bytes)
        checkMetadata(bytes)
        _ = AudioSniffer.sniff(bytes)
        checkBoxWalk(bytes)
    }

    /// The MP4 box walk over the bytes as a file: it ends, and a whole file's boxes add up to its length.
    static func checkBoxWalk(_ bytes: [UInt8]) {
        let structure = MP4Boxes.walk(size: Int64(bytes.count)) { offset in
            Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + 16)])
        }
        if case .damaged(let valid, _) = structure {
            precondition((0..<Int64(max(bytes.count, 1))).contains(valid), "valid bytes \(valid) outside the file")
        }
    }

    /// What the parser reports, with body slices joined: comparable across chunkings.
    enum Outcome: Equatable {
        case parts([(name: String, body: [UInt8])], complete: Bool)
        case failed(MultipartError.Code)

        static func == (a: Outcome, b: Outcome) -> Bool {
            switch (a, b) {
            case (.failed(let x), .failed(let y)): x == y
            case (.parts(let x, let c), .parts(let y, let d)):
                c == d && x.count == y.count && zip(x, y).allSatisfy { $0.name == $1.name && $0.body == $1.body }
            default: false
            }
        }
    }

    /// Parses `body` in the chunks `sizes` cuts it into (cycled), checking the event grammar on the way.
    static func parse(_ body: [UInt8], sizes: [Int]) -> Outcome {
        let limits = MultipartParser.Limits(
            maxHeaderBytes: 1_024, maxHeaderCount: 8, maxParts: 8, maxPreambleBytes: 256, maxBodyBytes: 1 << 20)
        guard var parser = try? MultipartParser(boundary: boundary, limits: limits) else {
            preconditionFailure("the fuzz boundary is valid")
        }
        var parts: [(name: String, body: [UInt8])] = []
        var inPart = false
        var ended = false
        var offset = 0
        var turn = 0
        var feeding = true
        do {
            while offset < body.count {
                let size = max(1, sizes.isEmpty ? body.count : sizes[turn % sizes.count])
                turn += 1
                let chunk = Array(body[offset..<min(body.count, offset + size)])
                offset += chunk.count
                for event in try parser.feed(chunk) {
                    precondition(!ended, "nothing follows the end")
                    switch event {
                    case .part(let headers):
                        precondition(!inPart, "a part starts only after the previous one ended")
                        inPart = true
                        parts.append((headers.name, []))
                    case .body(let slice):
                        precondition(inPart, "body bytes belong to a part")
                        parts[parts.count - 1].body += slice
                    case .partEnd:
                        precondition(inPart, "only an open part ends")
                        inPart = false
                    case .end:
                        precondition(!inPart, "the body ends between parts")
                        ended = true
                    }
                }
            }
            feeding = false
            try parser.finish()
            precondition(ended && parser.isComplete, "finish() succeeds only after the closing delimiter")
        } catch {
            // A parser that refused a chunk stays failed.
            precondition(!feeding || (try? parser.feed([0x2D])) == nil, "a failed parser refuses further input")
            if error.code == .truncated || error.code == .boundaryNotFound {
                return .parts(parts, complete: false)
            }
            return .failed(error.code)
        }
        precondition(parts.count <= 8 && parts.reduce(0) { $0 + $1.body.count } <= body.count)
        return .parts(parts, complete: true)
    }

    /// The same bytes fed whole, byte by byte and in input-chosen chunks give the same parts or the same error.
    static func checkChunkingDoesNotMatter(_ bytes: [UInt8]) {
        let whole = parse(bytes, sizes: [])
        let sizes = bytes.prefix(4).map { Int($0 % 17) + 1 }
        precondition(parse(bytes, sizes: sizes) == whole, "chunking changed the outcome")
        if bytes.count <= 512 {
            precondition(parse(bytes, sizes: [1]) == whole, "byte-by-byte feeding changed the outcome")
        }
    }

    /// Any file content survives the client's upload body and the server's parser unchanged — unless it contains
    /// the delimiter itself, which a client's random boundary makes practically impossible (then it must not be
    /// read back as the file).
    static func checkFileRoundTrip(_ bytes: [UInt8]) {
        let delimiter = Array("\r\n--\(boundary)".utf8)
        // (A file that starts with `--boundary` is fine: the blank line ending the part's headers is not a delimiter's
        // line break.)
        let containsDelimiter = (0..<max(0, bytes.count - delimiter.count + 1)).contains {
            bytes[$0..<$0 + delimiter.count].elementsEqual(delimiter)
        }
        guard let body = try? MultipartUploadBody(boundary: boundary, fileName: "toukan_fuzz.m4a") else {
            preconditionFailure("the upload body is valid")
        }
        let framed = body.head + bytes + body.tail
        let sizes = bytes.suffix(3).map { Int($0 % 29) + 1 }
        let outcome = parse(framed, sizes: sizes)
        guard !containsDelimiter else {
            if case .parts(let parts, complete: true) = outcome {
                precondition(parts.count != 1 || parts[0].body != bytes, "a delimiter inside the file was read as data")
            }
            return
        }
        guard case .parts(let parts, complete: true) = outcome else {
            preconditionFailure("a well-formed upload body must parse")
        }
        precondition(parts.count == 1 && parts[0].name == "file" && parts[0].body == bytes, "the file changed")
    }

    /// A metadata header that parses re-encodes to one that parses to the same entries.
    static func checkMetadata(_ bytes: [UInt8]) {
        guard bytes.count <= TusMetadata.maximumHeaderBytes + 16,
            let metadata = try? TusMetadata(parsing: String(decoding: bytes, as: UTF8.self))
        else { return }
        guard let again = try? TusMetadata(parsing: metadata.headerValue) else {
            preconditionFailure("encoded metadata must parse")
        }
        precondition(again == metadata, "metadata must round-trip")
    }
}
