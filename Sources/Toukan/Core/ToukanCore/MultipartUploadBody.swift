/// The body of the seed's `POST /upload` (multipart/form-data, one part named `file`) as a head and a tail: the
/// client sends `head`, then the file's bytes straight from disk, then `tail`, so a 60 MB recording is never held
/// in memory.
public struct MultipartUploadBody: Sendable, Hashable {
    public let boundary: String
    /// `--boundary`, the part's headers, the blank line.
    public let head: [UInt8]
    /// The line break that ends the file's bytes and the closing delimiter.
    public let tail: [UInt8]

    /// - Parameters:
    ///   - boundary: From `boundary(randomBytes:)`, or any valid RFC 2046 boundary.
    ///   - fileName: The recording's file name (printable ASCII, no `"` or `\`).
    ///   - fieldName: The seed's `file`.
    ///   - contentType: The seed's audio: `audio/mp4`.
    /// - Throws: `MultipartError` (`.invalidBoundary`, `.malformedHeader`) for a boundary or name that would break
    ///   the body.
    public init(boundary: String, fileName: String, fieldName: String = "file", contentType: String = "audio/mp4")
        throws(MultipartError)
    {
        try MultipartBoundary.validate(boundary)
        for (what, value) in [("file name", fileName), ("field name", fieldName), ("content type", contentType)] {
            guard !value.isEmpty, value.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C })
            else {
                throw MultipartError(
                    .malformedHeader, "the \(what) \(value.debugDescription) cannot go in a part header as is")
            }
        }
        self.boundary = boundary
        let headText =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(fieldName)\"; filename=\"\(fileName)\"\r\n"
            + "Content-Type: \(contentType)\r\n\r\n"
        head = Array(headText.utf8)
        tail = Array("\r\n--\(boundary)--\r\n".utf8)
    }

    /// The request's Content-Type header.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The request's Content-Length for a file of `fileSize` bytes.
    public func contentLength(fileSize: Int64) -> Int64 {
        Int64(head.count) + fileSize + Int64(tail.count)
    }

    /// A boundary from injected entropy: `toukan-` and 32 hex digits; 16 random bytes make a collision with the
    /// audio bytes as unlikely as guessing a key.
    public static func boundary(randomBytes: some Collection<UInt8>) -> String {
        precondition(randomBytes.count >= 16, "a boundary takes 16 random bytes")
        return "toukan-" + lowercaseHex(randomBytes.prefix(16))
    }
}

/// RFC 2046 §5.1.1 boundaries: 1 to 70 characters from `bchars`, not ending in a space.
enum MultipartBoundary {
    static func validate(_ boundary: String) throws(MultipartError) {
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ".utf8)
        guard (1...70).contains(boundary.utf8.count), boundary.utf8.allSatisfy({ allowed.contains($0) }),
            boundary.utf8.last != 0x20
        else {
            throw MultipartError(
                .invalidBoundary,
                "boundary \(boundary.debugDescription) is not 1 to 70 of the characters RFC 2046 allows")
        }
    }

    /// The boundary parameter of a `multipart/form-data` Content-Type (quoted or not).
    static func fromContentType(_ contentType: String) throws(MultipartError) -> String {
        let parts = contentType.split(separator: ";", omittingEmptySubsequences: false)
        let mediaType = parts.first.map { $0.trimmingSpaces.lowercased() } ?? ""
        guard mediaType == "multipart/form-data" else {
            throw MultipartError(
                .notMultipart, "Content-Type is \(mediaType.debugDescription), not multipart/form-data")
        }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            try validate(value)
            return value
        }
        throw MultipartError(.missingBoundary, "Content-Type multipart/form-data has no boundary parameter")
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
