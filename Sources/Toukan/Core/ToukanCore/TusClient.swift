public import Foundation

/// The client side of a tus 1.0 upload as a pure machine: it says which request to send (or which bytes of the
/// file to read) and consumes the responses. Creation (POST with Upload-Length and Upload-Metadata) → PATCH chunks
/// with Upload-Offset and a SHA-1 Upload-Checksum → complete when the server holds every byte and names the
/// memory. An upload with a known Location (from the ledger, after a cut or a restart) starts with HEAD and resumes
/// at the server's offset; a 409 is answered with HEAD, a 460 by sending the chunk again.
///
/// Failures are thrown as `UploadFailure`, so the queue classifies them like any other upload failure.
public struct TusClient: Sendable {
    /// The file to upload.
    public struct Upload: Sendable, Hashable {
        public var fileName: String
        public var fileType: String
        public var length: Int64
        public var idempotencyKey: IdempotencyKey

        public init(fileName: String, fileType: String = "audio/mp4", length: Int64, idempotencyKey: IdempotencyKey) {
            self.fileName = fileName
            self.fileType = fileType
            self.length = length
            self.idempotencyKey = idempotencyKey
        }
    }

    public enum Action: Sendable, Hashable {
        /// Perform this request and give its response to `receive(_:now:)`.
        case send(TusRequest)
        /// Read these bytes of the file and give them to `chunkRead(_:)`.
        case readChunk(Range<Int64>)
        /// The server holds the whole file and made this memory.
        case completed(memoryId: String)
        /// The upload was terminated on the server.
        case terminated
    }

    private enum State: Sendable, Hashable {
        case idle
        case creating
        case checkingOffset
        case reading(Range<Int64>)
        case patching(Range<Int64>)
        case completed(String)
        case terminating
        case terminated
    }

    /// A chunk that fails its checksum this many times in a row fails the attempt (460, retryable).
    public static let maximumChecksumRetries = 3

    public let upload: Upload
    /// Where uploads are created (`/files/`).
    public let endpoint: String
    public let chunkSize: Int
    /// The upload's URL, once created (keep it in the ledger to resume).
    public private(set) var location: String?
    /// Bytes the server has confirmed (keep it in the ledger for progress).
    public private(set) var offset: Int64 = 0
    private var state: State = .idle
    private var checksumFailures = 0
    private var recreated = false

    /// - Parameters:
    ///   - upload: The file; its length must be at least 1.
    ///   - endpoint: The creation URL.
    ///   - chunkSize: Bytes per PATCH.
    ///   - location: The upload's URL from an earlier attempt, to resume it.
    public init(
        upload: Upload, endpoint: String = "/files/", chunkSize: Int = 4 << 20, resumingAt location: String? = nil
    ) {
        precondition(upload.length > 0 && chunkSize > 0, "a tus upload has at least one byte and chunks of one")
        self.upload = upload
        self.endpoint = endpoint
        self.chunkSize = chunkSize
        self.location = location
    }

    /// The first action: HEAD the known upload, or create one.
    public mutating func start() -> Action {
        precondition(state == .idle, "start() is called once")
        if let location { return checkOffset(at: location) }
        return create()
    }

    /// The bytes asked for by `.readChunk`.
    /// - Throws: `.localFile` when the file did not have them (it changed or shrank).
    public mutating func chunkRead(_ bytes: [UInt8]) throws(UploadFailure) -> Action {
        guard case .reading(let range) = state, let location else {
            preconditionFailure("chunkRead(_:) answers .readChunk")
        }
        guard Int64(bytes.count) == range.count else {
            throw .localFile("expected \(range.count) bytes at offset \(range.lowerBound), read \(bytes.count)")
        }
        state = .patching(range)
        var headers = Self.baseHeaders
        headers.add("Upload-Offset", String(range.lowerBound))
        headers.add("Content-Type", Tus.patchContentType)
        headers.add("Upload-Checksum", TusChecksum(of: bytes).headerValue)
        return .send(TusRequest(method: .patch, target: location, headers: headers, body: bytes))
    }

    /// The response to the last `.send`.
    /// - Throws: `UploadFailure.server` for an error status (with the server's message and Retry-After),
    ///   `.protocolViolation` for an answer tus does not allow.
    public mutating func receive(_ response: TusResponse, now: Date) throws(UploadFailure) -> Action {
        switch state {
        case .creating:
            guard response.status == 201 else { throw failure(response, "creation", now: now) }
            guard let newLocation = response.headers["Location"], !newLocation.isEmpty else {
                throw .protocolViolation("the creation answer has no Location")
            }
            location = newLocation
            // A server that recognises the idempotency key answers with the existing upload and its offset.
            return try resume(from: response.headers, defaultOffset: 0)
        case .checkingOffset:
            if [404, 410, 403].contains(response.status) && !recreated {
                // The server no longer has the upload: create it again (the idempotency key still holds).
                recreated = true
                location = nil
                return create()
            }
            guard response.status == 200 || response.status == 204 else { throw failure(response, "HEAD", now: now) }
            return try resume(from: response.headers, defaultOffset: nil)
        case .patching(let range):
            switch response.status {
            case 204:
                let newOffset = try serverOffset(response.headers) ?? -1
                guard newOffset > range.lowerBound, newOffset <= range.upperBound else {
                    throw .protocolViolation(
                        "PATCH of \(range.lowerBound)..<\(range.upperBound) answered Upload-Offset \(newOffset)")
                }
                checksumFailures = 0
                return try resume(from: response.headers, defaultOffset: nil)
            case 409:
                return checkOffset(at: location!)
            case Tus.checksumMismatch where checksumFailures + 1 < Self.maximumChecksumRetries:
                checksumFailures += 1
                state = .reading(range)
                return .readChunk(range)
            default:
                throw failure(response, "PATCH", now: now)
            }
        case .terminating:
            guard [204, 404, 410].contains(response.status) else { throw failure(response, "DELETE", now: now) }
            state = .terminated
            return .terminated
        case .idle, .reading, .completed, .terminated:
            preconditionFailure("receive(_:now:) answers .send")
        }
    }

    /// Terminates the upload on the server (termination extension); nothing to do without a Location.
    public mutating func terminate() -> Action {
        guard let location else {
            state = .terminated
            return .terminated
        }
        state = .terminating
        return .send(TusRequest(method: .delete, target: location, headers: Self.baseHeaders))
    }

    private static var baseHeaders: HeaderFields { ["Tus-Resumable": Tus.version] }

    private mutating func create() -> Action {
        state = .creating
        var headers = Self.baseHeaders
        headers.add("Upload-Length", String(upload.length))
        let metadata = TusMetadata(
            fileName: upload.fileName, fileType: upload.fileType, idempotencyKey: upload.idempotencyKey)
        headers.add("Upload-Metadata", metadata.headerValue)
        headers.add(Tus.idempotencyKeyHeader, upload.idempotencyKey.rawValue)
        return .send(TusRequest(method: .post, target: endpoint, headers: headers))
    }

    private mutating func checkOffset(at location: String) -> Action {
        state = .checkingOffset
        return .send(TusRequest(method: .head, target: location, headers: Self.baseHeaders))
    }

    /// Continues from the offset the server gave: complete, or the next chunk.
    private mutating func resume(from headers: HeaderFields, defaultOffset: Int64?) throws(UploadFailure) -> Action {
        guard let serverOffset = try serverOffset(headers) ?? defaultOffset else {
            throw .protocolViolation("the answer has no Upload-Offset")
        }
        if let length = headers["Upload-Length"], length != String(upload.length) {
            throw .protocolViolation("the server's upload is \(length) bytes long, the file \(upload.length)")
        }
        guard serverOffset <= upload.length else {
            throw .protocolViolation("the server holds \(serverOffset) bytes of a \(upload.length)-byte file")
        }
        offset = serverOffset
        if serverOffset == upload.length {
            guard let memoryId = headers[Tus.memoryIdHeader], !memoryId.isEmpty else {
                throw .protocolViolation("the upload is complete but the server named no \(Tus.memoryIdHeader)")
            }
            state = .completed(memoryId)
            return .completed(memoryId: memoryId)
        }
        let range = serverOffset..<min(serverOffset + Int64(chunkSize), upload.length)
        state = .reading(range)
        return .readChunk(range)
    }

    private func serverOffset(_ headers: HeaderFields) throws(UploadFailure) -> Int64? {
        do throws(TusServerError) { return try headers.tusInteger("Upload-Offset") } catch {
            throw .protocolViolation(error.message)
        }
    }

    private func failure(_ response: TusResponse, _ request: String, now: Date) -> UploadFailure {
        guard (400..<600).contains(response.status) else {
            return .protocolViolation("the \(request) answered \(response.status)")
        }
        return .server(
            status: response.status, message: UploadErrorBody.message(in: response.body),
            retryAfter: UploadFailure.retryAfter(response.headers["Retry-After"], now: now))
    }
}
