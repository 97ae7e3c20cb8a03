import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Plain HTTP requests to a server under test on this machine, redirects not followed (tests look at them).
public enum LoopbackHTTP {
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(20))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// GET `url`.
    public static func get(_ url: String) async throws -> Answer {
        try await send(HTTPClientRequest(url: url))
    }

    /// POST `body` to `url` as `contentType` (JSON by default).
    public static func post(_ url: String, _ body: String = "{}", contentType: String = "application/json")
        async throws -> Answer
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(string: body))
        return try await send(request)
    }

    /// `method` `url` with `headers` and, when given, `body` (JSON unless `headers` says otherwise).
    public static func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        if body != nil, headers.keys.allSatisfy({ $0.lowercased() != "content-type" }) {
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        return try await send(request)
    }

    /// What a streaming answer (Server-Sent Events) sent until `done` says it is enough, or until `timeout`.
    public static func stream(
        _ url: String, timeout: Duration = .seconds(10), until done: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let collected = Collected()
        let reading = Task {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            for try await chunk in response.body {
                if done(collected.append(chunk.readableBytesView)) { return }
            }
        }
        let deadline = Task {
            try? await Task.sleep(for: timeout)
            reading.cancel()
        }
        _ = await reading.result
        deadline.cancel()
        return collected.text
    }

    private final class Collected: Sendable {
        private let bytes = Mutex<[UInt8]>([])
        func append(_ more: some Sequence<UInt8>) -> String {
            bytes.withLock {
                $0 += more
                return String(decoding: $0, as: UTF8.self)
            }
        }
        var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
    }

    static func send(_ request: HTTPClientRequest) async throws -> Answer {
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 8 << 20)
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return Answer(status: Int(response.status.code), headers: headers, body: Array(body.readableBytesView))
    }
}
