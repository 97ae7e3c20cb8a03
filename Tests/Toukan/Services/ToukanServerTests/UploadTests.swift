import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport

/// `POST /upload` in process: the seed's 201, refusals that store nothing, and the Idempotency-Key.
@Suite("POST /upload", .heavy("GStreamer encodes the fixtures; a server per test"))
struct UploadTests {
    @Test func acceptsAnM4AAndAnswersTheSeedsReceipt() async throws {
        let file = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 1, name: "tone-1s")))
        try await InProcessServer.run { client, directory in
            let response = try await InProcessServer.upload(client, body: Multipart.body(file))
            #expect(response.status == .created)
            let receipt = try UploadReceipt(jsonBody: Array(response.body.readableBytesView))
            #expect(receipt.message == UploadReceipt.defaultMessage)
            let memories = try await InProcessServer.memories(client)
            #expect(memories.count == 1)
            #expect(memories.first?["memory_id"] as? String == receipt.memoryIdText)
            #expect(memories.first?["status"] as? String == "processing")
            let stored = directory.appendingPathComponent("audio/\(receipt.memoryIdText).m4a")
            #expect(try Data(contentsOf: stored) == Data(file))
            #expect(InProcessServer.incomingFiles(directory).isEmpty)
            let audio = try await client.execute(uri: "/memories/\(receipt.memoryIdText)/audio", method: .get)
            #expect(audio.status == .ok)
            #expect(audio.headers[.contentType] == "audio/mp4")
            #expect(audio.body.readableBytes == file.count)
            #expect(audio.headers[.acceptRanges] == "bytes")
        }
    }

    @Test("the audio player seeks: one byte range is 206 with Content-Range, past the end is 416")
    func audioByteRanges() async throws {
        let file = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 1, name: "tone-1s")))
        try await InProcessServer.run { client, _ in
            let created = try await InProcessServer.upload(client, body: Multipart.body(file))
            let id = try UploadReceipt(jsonBody: Array(created.body.readableBytesView)).memoryIdText
            func get(_ range: String) async throws -> TestResponse {
                try await client.execute(uri: "/memories/\(id)/audio", method: .get, headers: [.range: range])
            }
            let middle = try await get("bytes=100-1123")
            #expect(middle.status == .partialContent)
            #expect(middle.headers[.contentRange] == "bytes 100-1123/\(file.count)")
            #expect(Array(middle.body.readableBytesView) == Array(file[100...1123]))
            let tail = try await get("bytes=-10")
            #expect(tail.status == .partialContent)
            #expect(Array(tail.body.readableBytesView) == Array(file.suffix(10)))
            let past = try await get("bytes=\(file.count)-")
            #expect(past.status == .rangeNotSatisfiable)
            #expect(past.headers[.contentRange] == "bytes */\(file.count)")
            let several = try await get("bytes=0-1,5-9")
            #expect(several.status == .ok && several.body.readableBytes == file.count)
        }
    }

    @Test(arguments: [
        ("WAV", Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 200), "WAV"),
        ("text", Array(String(repeating: "hello, this is not audio\n", count: 10).utf8), "text"),
        ("empty", [], "empty"),
    ])
    func refusesWhatIsNotM4A(kind: String, file: [UInt8], named: String) async throws {
        try await InProcessServer.run { client, directory in
            let response = try await InProcessServer.upload(client, body: Multipart.body(file))
            #expect(response.status == .unsupportedMediaType, "\(kind)")
            let message = UploadErrorBody.message(in: Array(response.body.readableBytesView)) ?? ""
            #expect(message.contains(named), "\(message)")
            #expect(try await InProcessServer.memories(client).isEmpty)
            #expect(InProcessServer.incomingFiles(directory).isEmpty)
        }
    }

    @Test func refusesAnotherContentType() async throws {
        try await InProcessServer.run { client, _ in
            let response = try await InProcessServer.upload(client, body: [1, 2, 3], contentType: "audio/mp4")
            #expect(response.status == .unsupportedMediaType)
        }
    }

    @Test func aTruncatedBodyStoresNothing() async throws {
        let file = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 1, name: "tone-1s")))
        try await InProcessServer.run { client, directory in
            let whole = Multipart.body(file)
            let response = try await InProcessServer.upload(client, body: Array(whole.prefix(whole.count - 100)))
            #expect(response.status == .badRequest)
            let message = UploadErrorBody.message(in: Array(response.body.readableBytesView)) ?? ""
            #expect(message.contains("truncated"), "\(message)")
            #expect(try await InProcessServer.memories(client).isEmpty)
            #expect(InProcessServer.incomingFiles(directory).isEmpty)
            let audio =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: directory.appendingPathComponent("audio").path)) ?? []
            #expect(audio.isEmpty)
        }
    }

    @Test func brokenMultipartIs400() async throws {
        try await InProcessServer.run { client, directory in
            let body = Array(
                "--\(Multipart.boundary)\r\nno colon here\r\n\r\nbody\r\n--\(Multipart.boundary)--\r\n".utf8)
            let response = try await InProcessServer.upload(client, body: body)
            #expect(response.status == .badRequest)
            let noFile = Array(
                "--\(Multipart.boundary)\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--\(Multipart.boundary)--\r\n"
                    .utf8)
            let second = try await InProcessServer.upload(client, body: noFile)
            #expect(second.status == .badRequest)
            #expect(try await InProcessServer.memories(client).isEmpty)
            #expect(InProcessServer.incomingFiles(directory).isEmpty)
        }
    }

    @Test func anIdempotencyKeyReplayReturnsTheSameMemory() async throws {
        let file = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 1, name: "tone-1s")))
        let other = [UInt8](try Data(contentsOf: try await AudioFixtures.tone(seconds: 4, name: "tone-4s")))
        try await InProcessServer.run { client, _ in
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "0123456789abcdef0123456789abcdef"]
            let first = try await InProcessServer.upload(client, body: Multipart.body(file), headers: key)
            let second = try await InProcessServer.upload(client, body: Multipart.body(file), headers: key)
            #expect(first.status == .created)
            #expect(second.status == .created)
            let firstId = InProcessServer.json(first)["memory_id"] as? String
            #expect(firstId != nil)
            #expect(InProcessServer.json(second)["memory_id"] as? String == firstId)
            let conflicting = try await InProcessServer.upload(client, body: Multipart.body(other), headers: key)
            #expect(conflicting.status == .unprocessableContent)
            #expect(try await InProcessServer.memories(client).count == 1)
        }
    }
}
