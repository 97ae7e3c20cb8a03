public import Crypto

/// The server's side of tus 1.0 without I/O: which headers to answer with, and which requests to refuse with which
/// status. The service keeps the uploads (offset, length, metadata) and streams PATCH bodies through a
/// `TusPatchReceiver`.
public struct TusServerPolicy: Sendable, Hashable {
    /// The largest upload accepted (`Tus-Max-Size`); a larger Upload-Length is refused with 413.
    public var maximumSize: Int64

    public init(maximumSize: Int64) {
        self.maximumSize = maximumSize
    }

    /// What a creation request asked for.
    public struct Creation: Sendable, Hashable {
        public var length: Int64
        public var metadata: TusMetadata
        /// From the `Idempotency-Key` header or the `idempotency-key` metadata.
        public var idempotencyKey: IdempotencyKey?
    }

    /// What a PATCH may append, once its headers are checked.
    public struct Patch: Sendable, Hashable {
        public var offset: Int64
        /// Bytes left before the upload's length.
        public var remaining: Int64
        public var checksum: TusChecksum?
    }

    /// The headers of the OPTIONS answer (204).
    public var optionsHeaders: HeaderFields {
        [
            "Tus-Resumable": Tus.version, "Tus-Version": Tus.version,
            "Tus-Extension": Tus.extensions.joined(separator: ","), "Tus-Max-Size": String(maximumSize),
            "Tus-Checksum-Algorithm": Tus.checksumAlgorithms.joined(separator: ","),
        ]
    }

    /// Every request but OPTIONS must say `Tus-Resumable: 1.0.0`.
    /// - Throws: 412 with `Tus-Version`.
    public func checkVersion(_ headers: HeaderFields) throws(TusServerError) {
        guard headers["Tus-Resumable"] == Tus.version else {
            let given = headers["Tus-Resumable"].map { "Tus-Resumable \($0.debugDescription)" } ?? "no Tus-Resumable"
            throw TusServerError(
                status: 412, "\(given): this server speaks tus \(Tus.version)", headers: ["Tus-Version": Tus.version])
        }
    }

    /// Checks a creation POST.
    /// - Throws: 412 (version), 400 (no or bad Upload-Length, deferred length, empty upload, bad metadata or key,
    ///   a body on creation), 413 (longer than `maximumSize`).
    public func validateCreation(_ headers: HeaderFields) throws(TusServerError) -> Creation {
        try checkVersion(headers)
        guard headers["Upload-Defer-Length"] == nil else {
            throw TusServerError(status: 400, "Upload-Defer-Length is not supported: give Upload-Length")
        }
        guard let length = try headers.tusInteger("Upload-Length") else {
            throw TusServerError(status: 400, "a creation request needs Upload-Length")
        }
        guard length > 0 else { throw TusServerError(status: 400, "Upload-Length is 0: an empty file is no recording") }
        guard length <= maximumSize else {
            throw TusServerError(
                status: 413, "Upload-Length \(length) is larger than the \(maximumSize) bytes this server accepts")
        }
        if let bodyLength = try headers.tusInteger("Content-Length"), bodyLength > 0 {
            throw TusServerError(status: 400, "creation-with-upload is not supported: create, then PATCH")
        }
        let metadata =
            try headers["Upload-Metadata"].map { header throws(TusServerError) in
                try TusMetadata(parsing: header)
            } ?? TusMetadata()
        let fromHeader = headers[Tus.idempotencyKeyHeader]
        let fromMetadata = metadata.string("idempotency-key")
        if let fromHeader, let fromMetadata, fromHeader != fromMetadata {
            throw TusServerError(status: 400, "the Idempotency-Key header and metadata disagree")
        }
        var key: IdempotencyKey?
        if let text = fromHeader ?? fromMetadata {
            guard let parsed = IdempotencyKey(rawValue: text) else {
                throw TusServerError(
                    status: 400, "Idempotency-Key must be 16 to 128 characters of letters, digits, - and _")
            }
            key = parsed
        }
        return Creation(length: length, metadata: metadata, idempotencyKey: key)
    }

    /// Checks a PATCH against the upload it targets.
    /// - Parameters:
    ///   - headers: The request's headers.
    ///   - offset: The server's offset of the upload.
    ///   - length: The upload's length.
    /// - Throws: 412 (version), 415 (Content-Type), 400 (no or bad Upload-Offset, bad checksum header), 409
    ///   (Upload-Offset is not the server's), 413 (the body would pass the upload's length).
    public func validatePatch(_ headers: HeaderFields, offset: Int64, length: Int64) throws(TusServerError) -> Patch {
        try checkVersion(headers)
        let contentType = headers["Content-Type"]?.trimmingSpaces.lowercased()
        guard contentType == Tus.patchContentType else {
            throw TusServerError(
                status: 415, "a PATCH's Content-Type must be \(Tus.patchContentType), not \(contentType ?? "none")")
        }
        guard let claimed = try headers.tusInteger("Upload-Offset") else {
            throw TusServerError(status: 400, "a PATCH needs Upload-Offset")
        }
        guard claimed == offset else {
            throw TusServerError(
                status: 409, "Upload-Offset \(claimed) is not the server's offset \(offset); HEAD the upload and resume"
            )
        }
        let remaining = length - offset
        if let bodyLength = try headers.tusInteger("Content-Length"), bodyLength > remaining {
            throw TusServerError(
                status: 413, "\(bodyLength) bytes at offset \(offset) would pass the upload's length \(length)")
        }
        let checksum = try headers["Upload-Checksum"].map { header throws(TusServerError) in
            try TusChecksum(header: header)
        }
        return Patch(offset: offset, remaining: remaining, checksum: checksum)
    }

    /// The answer to a creation (201).
    public func creationHeaders(location: String, offset: Int64 = 0) -> HeaderFields {
        ["Tus-Resumable": Tus.version, "Location": location, "Upload-Offset": String(offset)]
    }

    /// The answer to a HEAD (200) or a PATCH (204): the offset, and the memory once complete.
    public func offsetHeaders(offset: Int64, length: Int64, memoryId: String? = nil) -> HeaderFields {
        var headers: HeaderFields = [
            "Tus-Resumable": Tus.version, "Upload-Offset": String(offset), "Upload-Length": String(length),
            "Cache-Control": "no-store",
        ]
        if let memoryId { headers.add(Tus.memoryIdHeader, memoryId) }
        return headers
    }
}

/// One PATCH body as it streams in: counts the bytes against what the upload has left and checks the chunk's
/// checksum at the end. The service writes the bytes to a scratch area and appends them to the upload only when
/// `finish()` accepts them (a chunk with a wrong checksum is discarded whole, as the checksum extension requires).
public struct TusPatchReceiver: Sendable {
    public let patch: TusServerPolicy.Patch
    public private(set) var received: Int64 = 0
    private var hash = Insecure.SHA1()

    public init(_ patch: TusServerPolicy.Patch) {
        self.patch = patch
    }

    /// The next bytes of the body.
    /// - Throws: 413 when they pass the upload's length.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(TusServerError) {
        received += Int64(bytes.count)
        guard received <= patch.remaining else {
            throw TusServerError(
                status: 413, "the PATCH passes the upload's length: only \(patch.remaining) bytes were left")
        }
        if patch.checksum != nil { hash.update(data: Array(bytes)) }
    }

    /// The body is complete.
    /// - Returns: The upload's new offset.
    /// - Throws: 460 when the checksum does not match (the chunk is to be discarded).
    public func finish() throws(TusServerError) -> Int64 {
        if let expected = patch.checksum, Array(hash.finalize()) != expected.digest {
            throw TusServerError(
                status: Tus.checksumMismatch, "the chunk's SHA-1 does not match Upload-Checksum; it was discarded")
        }
        return patch.offset + received
    }
}
