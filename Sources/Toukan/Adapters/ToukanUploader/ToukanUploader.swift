import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
public import ToukanCore

/// Uploads recordings to a Toukan server over HTTP with async-http-client: `POST /upload` (multipart/form-data,
/// field `file`, streamed from disk in constant memory) for files up to ``Configuration/tusThreshold``, tus 1.0 at
/// `/files/` (ToukanCore's `TusClient`: chunks read from disk, SHA-1 checksums, resume at the server's offset) for
/// larger ones. Every request carries the recording's `Idempotency-Key`, so a retry whose answer was lost gets the
/// first upload's memory.
public final class ToukanUploader: RecordingUploading {
    public struct Configuration: Sendable {
        /// The server, e.g. `http://192.168.1.20:8080`; `POST /upload` and `/files/` are resolved against it.
        public var server: URL
        /// Files larger than this many bytes go through tus (resumable); smaller ones through `POST /upload`.
        public var tusThreshold: Int64
        /// Bytes per tus PATCH.
        public var tusChunkSize: Int
        /// Bytes read from disk at a time for `POST /upload`.
        public var streamChunkSize: Int
        /// How long a connection may take to open, and how long the server may stay silent.
        public var connectTimeout: Duration
        public var readTimeout: Duration

        public init(
            server: URL, tusThreshold: Int64 = 8 << 20, tusChunkSize: Int = 4 << 20, streamChunkSize: Int = 64 << 10,
            connectTimeout: Duration = .seconds(10), readTimeout: Duration = .seconds(60)
        ) {
            self.server = server
            self.tusThreshold = tusThreshold
            self.tusChunkSize = tusChunkSize
            self.streamChunkSize = streamChunkSize
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
        }
    }

    /// The longest response body read (error messages and receipts are small).
    static let maximumResponseBytes = 64 * 1024

    public let configuration: Configuration
    private let client: HTTPClient
    private let now: @Sendable () -> Date
    private let randomBytes: @Sendable (Int) -> [UInt8]

    /// - Parameters:
    ///   - configuration: The server and the limits.
    ///   - now: The clock (for Retry-After dates).
    ///   - randomBytes: Entropy for multipart boundaries.
    public init(
        configuration: Configuration,
        now: @escaping @Sendable () -> Date = { Date() },
        randomBytes: @escaping @Sendable (Int) -> [UInt8] = { count in
            var generator = SystemRandomNumberGenerator()
            return (0..<count).map { _ in generator.next() }
        }
    ) {
        self.configuration = configuration
        self.now = now
        self.randomBytes = randomBytes
        var httpConfiguration = HTTPClient.Configuration(
            timeout: .init(
                connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.readTimeout)))
        httpConfiguration.httpVersion = .http1Only
        httpConfiguration.redirectConfiguration = .disallow
        // A refused connection is an answer: report it now (the upload queue waits and tries again), rather than
        // retrying it inside the client until the connect timeout has passed.
        httpConfiguration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: httpConfiguration)
    }

    /// Closes the connections; call once, when done.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    deinit {
        // An uploader dropped without shutdown() (a command or a test that ended by an error first) must neither
        // leak its connections nor trip AsyncHTTPClient's debug check (it crashed a whole test run): the client
        // shuts down in the background, keeping itself alive until done. After shutdown() this fails quietly.
        client.shutdown().whenComplete { _ in }
    }

    public func upload(_ recording: Recording, file: URL, report: @escaping @Sendable (UploadEvent) -> Void) async
        -> UploadOutcome
    {
        do throws(UploadFailure) {
            let size = try Self.fileSize(file)
            guard size > 0 else { throw .localFile("\(file.path) is empty") }
            let memoryId: String
            if size > configuration.tusThreshold || recording.uploadLocation != nil {
                memoryId = try await uploadResumably(recording, file: file, size: size, report: report)
            } else {
                memoryId = try await uploadMultipart(recording, file: file, size: size, report: report)
            }
            return .uploaded(memoryId: memoryId)
        } catch {
            return .failed(error)
        }
    }

    // MARK: POST /upload

    private func uploadMultipart(
        _ recording: Recording, file: URL, size: Int64, report: @escaping @Sendable (UploadEvent) -> Void
    ) async throws(UploadFailure) -> String {
        let multipart: MultipartUploadBody
        do {
            multipart = try MultipartUploadBody(
                boundary: MultipartUploadBody.boundary(randomBytes: randomBytes(16)),
                fileName: file.lastPathComponent)
        } catch {
            throw .localFile("the file name \(file.lastPathComponent) cannot be sent: \(error.message)")
        }
        let total = multipart.contentLength(fileSize: size)
        var request = HTTPClientRequest(url: resolve("/upload"))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: multipart.contentType)
        request.headers.add(name: Tus.idempotencyKeyHeader, value: recording.idempotencyKey.rawValue)
        let body = FileBody(
            head: multipart.head, file: file, length: size, tail: multipart.tail,
            chunkSize: configuration.streamChunkSize, onSent: { report(.progress(sent: $0, total: total)) })
        request.body = .stream(body, length: .known(total))
        let (status, headers, bytes) = try await perform(request)
        switch UploadReceipt.interpret(status: status, headers: headers, body: bytes, now: now()) {
        case .success(let receipt): return receipt.memoryIdText
        case .failure(let failure): throw failure
        }
    }

    // MARK: tus 1.0

    private func uploadResumably(
        _ recording: Recording, file: URL, size: Int64, report: @escaping @Sendable (UploadEvent) -> Void
    ) async throws(UploadFailure) -> String {
        var tus = TusClient(
            upload: .init(fileName: file.lastPathComponent, length: size, idempotencyKey: recording.idempotencyKey),
            endpoint: resolve("/files/"), chunkSize: configuration.tusChunkSize,
            resumingAt: recording.uploadLocation)
        let reader = try FileReader(file)
        var stored = (offset: recording.uploadOffset, location: recording.uploadLocation)
        var action = tus.start()
        while true {
            switch action {
            case .send(let tusRequest):
                let response = try await perform(tusRequest)
                action = try tus.receive(response, now: now())
                if (tus.offset, tus.location) != stored {
                    stored = (tus.offset, tus.location)
                    report(.stored(offset: tus.offset, location: tus.location))
                    report(.progress(sent: tus.offset, total: size))
                }
            case .readChunk(let range):
                action = try tus.chunkRead(try reader.read(range))
            case .completed(let memoryId):
                return memoryId
            case .terminated:
                throw .protocolViolation("the tus upload was terminated")
            }
        }
    }

    private func perform(_ tusRequest: TusRequest) async throws(UploadFailure) -> TusResponse {
        var request = HTTPClientRequest(url: resolve(tusRequest.target))
        request.method = HTTPMethod(rawValue: tusRequest.method.rawValue)
        for field in tusRequest.headers.fields { request.headers.add(name: field.name, value: field.value) }
        if !tusRequest.body.isEmpty { request.body = .bytes(ByteBuffer(bytes: tusRequest.body)) }
        let (status, headers, body) = try await perform(request)
        return TusResponse(status: status, headers: headers, body: body)
    }

    // MARK: HTTP

    /// `target` (a path or an absolute URL, as a Location may be) against the server.
    private func resolve(_ target: String) -> String {
        URL(string: target, relativeTo: configuration.server)?.absoluteString ?? target
    }

    /// Sends `request` and reads the answer; anything that leaves no answer is a `.network` failure.
    private func perform(_ request: HTTPClientRequest) async throws(UploadFailure) -> (Int, HeaderFields, [UInt8]) {
        do {
            let response = try await client.execute(request, deadline: .distantFuture)
            var headers = HeaderFields()
            for (name, value) in response.headers { headers.add(name, value) }
            let body =
                request.method == .HEAD
                ? ByteBuffer() : try await response.body.collect(upTo: Self.maximumResponseBytes)
            return (Int(response.status.code), headers, Array(buffer: body))
        } catch let failure as UploadFailure {
            throw failure
        } catch {
            let url = URL(string: request.url)
            let server = url?.host.map { host in url?.port.map { "\(host):\($0)" } ?? host } ?? request.url
            let why = NetworkErrorText.describe(error, connectTimeout: configuration.connectTimeout)
            throw .network("cannot reach \(server) (\(why))")
        }
    }

    private static func fileSize(_ file: URL) throws(UploadFailure) -> Int64 {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            guard let size = attributes[.size] as? NSNumber else { throw CocoaError(.fileReadUnknown) }
            return size.int64Value
        } catch {
            throw .localFile("\(file.path): \(error.localizedDescription)")
        }
    }
}
