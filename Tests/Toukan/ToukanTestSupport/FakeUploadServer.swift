public import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
public import ToukanCore

/// A stand-in for `toukan-server` in the client's tests, on a real loopback socket (Hummingbird): `POST /upload`
/// per the seed's contract with idempotency keys, and tus 1.0 at `/files/` served by ``TusServerModel``. Answers
/// can be scripted (a 503, a 415 with a message), and everything received is kept for the test to check.
public final class FakeUploadServer: Sendable {
    /// A memory made by `POST /upload`.
    public struct Memory: Sendable, Hashable {
        public var id: String
        public var fileName: String?
        public var bytes: [UInt8]
    }

    /// One request as received.
    public struct Received: Sendable, Hashable {
        public var method: String
        public var path: String
        public var idempotencyKey: String?
        /// The Upload-Offset of a PATCH.
        public var uploadOffset: Int64?
    }

    private struct State: Sendable {
        var scripted: [(status: Int, headers: [String: String], body: [UInt8])] = []
        var memories: [Memory] = []
        var byKey: [String: String] = [:]
        var received: [Received] = []
        var tus = TusServerModel(maximumSize: 1 << 30)
    }

    private let state = Mutex(State())

    public init() {}

    /// Answers the next `POST /upload` with `status`, these headers and `{"error": …, "message": message}`
    /// instead of storing it (in the order scripted).
    public func script(status: Int, message: String, headers: [String: String] = [:]) {
        let body = UploadErrorBody(error: "scripted", message: message).jsonBody
        state.withLock { $0.scripted.append((status, headers, body)) }
    }

    /// Memories made by `POST /upload`, in order (a repeated idempotency key makes none).
    public var memories: [Memory] { state.withLock { $0.memories } }
    /// Every request, in order.
    public var received: [Received] { state.withLock { $0.received } }
    /// The tus side: its uploads (by Location) and how many memories it made.
    public var tus: TusServerModel { state.withLock { $0.tus } }

    /// Runs the server on 127.0.0.1 (`port` 0: any free port) until `body` returns; `body` gets the port.
    public func run<T: Sendable>(port: Int = 0, _ body: @escaping @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router()
        router.post("/upload") { request, _ in try await self.upload(request) }
        for method in [HTTPRequest.Method.post, .head, .patch, .delete, .options] {
            router.on("/files", method: method) { request, _ in try await self.tus(request) }
            router.on("/files/:id", method: method) { request, _ in try await self.tus(request) }
        }
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                announce.yield(channel.localAddress?.port ?? port)
                announce.finish()
            },
            logger: Logger(label: "fake-upload-server") { _ in SwiftLogNoOpLogHandler() })
        let untilReady: @Sendable () async throws -> T = {
            var iterator = ports.makeAsyncIterator()
            guard let bound = await iterator.next() else { throw CancellationError() }
            return try await body(bound)
        }
        return try await whileServing({ try await app.runService() }, untilReady)
    }

    private func upload(_ request: Request) async throws -> Response {
        let key = request.headers[HTTPField.Name("Idempotency-Key")!]
        // The whole body first: a cut connection throws here, and nothing is stored (as the real server).
        let body = try await request.body.collect(upTo: 1 << 30)
        let contentType = request.headers[.contentType] ?? ""
        return state.withLock { state in
            state.received.append(Received(method: "POST", path: "/upload", idempotencyKey: key))
            if !state.scripted.isEmpty {
                let answer = state.scripted.removeFirst()
                var headers = HTTPFields()
                for (name, value) in answer.headers { headers[HTTPField.Name(name)!] = value }
                return Response(
                    status: .init(code: answer.status), headers: headers,
                    body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
            }
            if let key, let existing = state.byKey[key] {
                return Self.receipt(existing)
            }
            guard let (fileName, bytes) = Self.filePart(Array(buffer: body), contentType: contentType) else {
                return Response(
                    status: .badRequest,
                    body: .init(
                        byteBuffer: ByteBuffer(
                            bytes: UploadErrorBody(error: "bad_request", message: "no file part").jsonBody)))
            }
            let id = UUID().uuidString.lowercased()
            state.memories.append(Memory(id: id, fileName: fileName, bytes: bytes))
            if let key { state.byKey[key] = id }
            return Self.receipt(id)
        }
    }

    private static func receipt(_ id: String) -> Response {
        Response(
            status: .created, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: UploadReceipt(memoryId: UUID(uuidString: id)!).jsonBody)))
    }

    /// The `file` part's name and bytes, read with ToukanCore's parser.
    private static func filePart(_ body: [UInt8], contentType: String) -> (String?, [UInt8])? {
        guard var parser = try? MultipartParser(contentType: contentType),
            let events = try? parser.feed(body), (try? parser.finish()) != nil
        else { return nil }
        var fileName: String?
        var bytes: [UInt8] = []
        var inFile = false
        for event in events {
            switch event {
            case .part(let headers):
                inFile = headers.name == "file"
                if inFile { fileName = headers.fileName }
            case .body(let chunk) where inFile: bytes += chunk
            default: break
            }
        }
        return fileName == nil && bytes.isEmpty ? nil : (fileName, bytes)
    }

    private func tus(_ request: Request) async throws -> Response {
        var headers = HeaderFields()
        for field in request.headers { headers.add(field.name.rawName, field.value) }
        let body = Array(buffer: try await request.body.collect(upTo: 64 << 20))
        guard let method = TusMethod(rawValue: request.method.rawValue) else { return Response(status: .notFound) }
        let tusRequest = TusRequest(method: method, target: request.uri.path, headers: headers, body: body)
        let response = state.withLock { state in
            state.received.append(
                Received(
                    method: method.rawValue, path: request.uri.path, idempotencyKey: headers[Tus.idempotencyKeyHeader],
                    uploadOffset: headers["Upload-Offset"].flatMap { Int64($0) }))
            return state.tus.handle(tusRequest)
        }
        var fields = HTTPFields()
        for field in response.headers.fields {
            fields.append(HTTPField(name: HTTPField.Name(field.name)!, value: field.value))
        }
        return Response(
            status: .init(code: response.status), headers: fields,
            body: .init(byteBuffer: ByteBuffer(bytes: response.body)))
    }
}
