import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport

/// tus 1.0 at /files/ in process: the rules of ToukanCore's TusServerPolicy over real requests, completion into a
/// memory with `Memory-Id`, and an offset that survives a restart of the server on the same data directory.
@Suite("tus at /files/", .heavy("GStreamer encodes the fixture; a server per test"))
struct TusTests {
    static func name(_ text: String) -> HTTPField.Name { HTTPField.Name(text)! }

    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: Self.name(name), value: value)) }
        return fields
    }

    static func create(_ client: any TestClientProtocol, length: Int, key: String? = nil) async throws -> TestResponse {
        var pairs = [("Tus-Resumable", "1.0.0"), ("Upload-Length", String(length))]
        pairs.append(("Upload-Metadata", "filename \(Data("meeting.m4a".utf8).base64EncodedString())"))
        if let key { pairs.append(("Idempotency-Key", key)) }
        return try await client.execute(uri: "/files/", method: .post, headers: fields(pairs))
    }

    static func patch(
        _ client: any TestClientProtocol, _ location: String, offset: Int, _ bytes: ArraySlice<UInt8>,
        checksum: [UInt8]? = nil
    ) async throws -> TestResponse {
        var pairs = [
            ("Tus-Resumable", "1.0.0"), ("Upload-Offset", String(offset)),
            ("Content-Type", "application/offset+octet-stream"),
        ]
        let digest = checksum ?? Array(Insecure.SHA1.hash(data: Array(bytes)))
        pairs.append(("Upload-Checksum", "sha1 \(Data(digest).base64EncodedString())"))
        return try await client.execute(
            uri: location, method: .patch, headers: fields(pairs), body: ByteBuffer(bytes: Array(bytes)))
    }

    static func head(_ client: any TestClientProtocol, _ location: String) async throws -> TestResponse {
        try await client.execute(uri: location, method: .head, headers: fields([("Tus-Resumable", "1.0.0")]))
    }

    @Test func uploadsInChunksAndBecomesAMemory() async throws {
        let file = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 4, name: "tone-4s")))
        try await InProcessServer.run { client, _ in
            let options = try await client.execute(uri: "/files/", method: .options)
            #expect(options.status == .noContent)
            #expect(options.headers[Self.name("Tus-Extension")]?.contains("checksum") == true)
            let created = try await Self.create(client, length: file.count)
            #expect(created.status == .created)
            let location = try #require(created.headers[.location])
            let half = file.count / 2
            let first = try await Self.patch(client, location, offset: 0, file[0..<half])
            #expect(first.status == .noContent)
            #expect(first.headers[Self.name("Upload-Offset")] == String(half))
            // A wrong checksum: 460 and the chunk discarded.
            let wrong = try await Self.patch(
                client, location, offset: half, file[half...], checksum: [UInt8](repeating: 0, count: 20))
            #expect(wrong.status.code == 460)
            #expect(try await Self.head(client, location).headers[Self.name("Upload-Offset")] == String(half))
            // A stale offset: 409.
            #expect(try await Self.patch(client, location, offset: 0, file[0..<10]).status == .conflict)
            let last = try await Self.patch(client, location, offset: half, file[half...])
            #expect(last.status == .noContent)
            let memoryId = try #require(last.headers[Self.name("Memory-Id")])
            let memories = try await InProcessServer.memories(client)
            #expect(memories.map { $0["memory_id"] as? String } == [memoryId])
            #expect(try await Self.head(client, location).headers[Self.name("Memory-Id")] == memoryId)
        }
    }

    @Test func refusesWithoutTheVersionAndAboveTheMaximum() async throws {
        try await InProcessServer.run(maximumUploadBytes: 1_000) { client, _ in
            let noVersion = try await client.execute(
                uri: "/files/", method: .post, headers: Self.fields([("Upload-Length", "10")]))
            #expect(noVersion.status == .preconditionFailed)
            #expect(try await Self.create(client, length: 5_000).status == .contentTooLarge)
            #expect(try await Self.head(client, "/files/0123456789abcdef0123456789abcdef").status == .notFound)
        }
    }

    @Test func aRepeatedCreationContinuesTheSameUpload() async throws {
        try await InProcessServer.run { client, _ in
            let key = "fedcba9876543210fedcba9876543210"
            let first = try await Self.create(client, length: 1_000, key: key)
            let second = try await Self.create(client, length: 1_000, key: key)
            #expect(first.headers[.location] == second.headers[.location])
            #expect(try await Self.create(client, length: 2_000, key: key).status == .unprocessableContent)
            let location = try #require(first.headers[.location])
            let deleted = try await client.execute(
                uri: location, method: .delete, headers: Self.fields([("Tus-Resumable", "1.0.0")]))
            #expect(deleted.status == .noContent)
            #expect(try await Self.head(client, location).status == .notFound)
        }
    }

    @Test func theOffsetSurvivesARestart() async throws {
        let file = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 1, name: "tone-1s")))
        let directory = try Subprocess.temporaryDirectory("toukan-tus-restart")
        defer { try? FileManager.default.removeItem(at: directory) }
        let location = LocationBox()
        try await InProcessServer.run(dataDirectory: directory) { client, _ in
            let created = try await Self.create(client, length: file.count)
            let url = try #require(created.headers[.location])
            #expect(try await Self.patch(client, url, offset: 0, file[0..<1_000]).status == .noContent)
            location.value = url
        }
        try await InProcessServer.run(dataDirectory: directory) { client, _ in
            let url = location.value
            #expect(try await Self.head(client, url).headers[Self.name("Upload-Offset")] == "1000")
            let last = try await Self.patch(client, url, offset: 1_000, file[1_000...])
            #expect(last.status == .noContent)
            #expect(last.headers[Self.name("Memory-Id")] != nil)
        }
    }
}

final class LocationBox: @unchecked Sendable {
    var value = ""
}
