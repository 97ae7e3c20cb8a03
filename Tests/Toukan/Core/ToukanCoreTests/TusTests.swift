import Crypto
import Foundation
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport

@Suite("tus 1.0: the client machine against a server made of the core's rules")
struct TusTests {
    static let key = IdempotencyKey(randomBytes: [UInt8](repeating: 7, count: 16))

    static func file(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return random.bytes(count)
    }

    static func client(_ file: [UInt8], chunk: Int = 1_000, location: String? = nil) -> TusClient {
        TusClient(
            upload: .init(fileName: "toukan_2024-01-15T14-30-00.m4a", length: Int64(file.count), idempotencyKey: key),
            chunkSize: chunk, resumingAt: location)
    }

    @Test("a whole upload: creation, PATCH chunks with checksums, the memory at the end")
    func wholeUpload() throws {
        let file = Self.file(4_500)
        var server = TusServerModel()
        var client = Self.client(file)
        #expect(try TusDriver.run(&client, &server, file: file) == .completed("memory-1"))
        #expect(server.uploads["/files/1"].map { Data($0.bytes) } == Data(file))
        #expect(server.requests == [.post, .patch, .patch, .patch, .patch, .patch])
        #expect(client.offset == 4_500 && client.location == "/files/1")
        let metadata = try #require(server.uploads["/files/1"]?.metadata)
        #expect(metadata.string("filename") == "toukan_2024-01-15T14-30-00.m4a")
        #expect(metadata.string("filetype") == "audio/mp4")
        #expect(metadata.string("idempotency-key") == Self.key.rawValue)
    }

    @Test("the requests carry what tus requires")
    func requestHeaders() throws {
        let file = Self.file(10)
        var client = Self.client(file)
        guard case .send(let creation) = client.start() else { throw Failure("no creation") }
        #expect(creation.method == .post && creation.target == "/files/")
        #expect(creation.headers["tus-resumable"] == "1.0.0" && creation.headers["Upload-Length"] == "10")
        #expect(creation.headers["Idempotency-Key"] == Self.key.rawValue)
        let created = TusResponse(status: 201, headers: ["Location": "/files/a", "Tus-Resumable": "1.0.0"])
        #expect(try client.receive(created, now: LedgerFixtures.epoch) == .readChunk(0..<10))
        guard case .send(let patch) = try client.chunkRead(file) else { throw Failure("no PATCH") }
        #expect(patch.method == .patch && patch.target == "/files/a" && patch.body == file)
        #expect(patch.headers["Upload-Offset"] == "0")
        #expect(patch.headers["Content-Type"] == "application/offset+octet-stream")
        #expect(
            patch.headers["Upload-Checksum"] == "sha1 " + Data(Insecure.SHA1.hash(data: file)).base64EncodedString())
    }

    @Test("cut at 59 of 60 chunks, a new client from the ledger's Location resumes at the server's offset")
    func resumeAfterCut() throws {
        let file = Self.file(60_000)
        var server = TusServerModel()
        var first = Self.client(file)
        var action = first.start()
        // Let 59 chunks through, then cut the 60th halfway.
        var patches = 0
        while true {
            if case .send(let request) = action, request.method == .patch {
                patches += 1
                if patches == 60 { server.cutNextPatchAfter = 400 }
            }
            if case .send(let request) = action {
                let response = server.handle(request)
                if response.status == 0 { break }
                action = try first.receive(response, now: LedgerFixtures.epoch)
            } else if case .readChunk(let range) = action {
                action = try first.chunkRead(Array(file[Int(range.lowerBound)..<Int(range.upperBound)]))
            }
        }
        #expect(first.offset == 59_000, "the last confirmed offset")
        #expect(server.uploads["/files/1"]?.bytes.count == 59_400)
        var resumed = Self.client(file, location: first.location)
        server.requests = []
        #expect(try TusDriver.run(&resumed, &server, file: file) == .completed("memory-1"))
        #expect(server.requests == [.head, .patch], "HEAD, then only the last 600 bytes")
        #expect(server.uploads["/files/1"].map { Data($0.bytes) } == Data(file))
    }

    @Test("a lost creation response: the retry's POST carries the same key and gets the same upload, one memory")
    func lostCreationResponse() throws {
        let file = Self.file(3_000)
        var server = TusServerModel()
        var first = Self.client(file)
        guard case .send(let creation) = first.start() else { throw Failure("no creation") }
        _ = server.handle(creation)  // the response never arrives
        var second = Self.client(file)
        #expect(try TusDriver.run(&second, &server, file: file) == .completed("memory-1"))
        #expect(server.uploads.count == 1 && server.memoriesMade == 1)
        // And once more after completion: the same memory, nothing sent but the POST.
        var third = Self.client(file)
        server.requests = []
        #expect(try TusDriver.run(&third, &server, file: file) == .completed("memory-1"))
        #expect(server.requests == [.post] && server.memoriesMade == 1)
    }

    @Test("the same key for a file of another length is refused with 422, a permanent failure")
    func keyReuse() throws {
        var server = TusServerModel()
        var first = Self.client(Self.file(100))
        _ = try TusDriver.run(&first, &server, file: Self.file(100))
        var other = Self.client(Self.file(200))
        let error = try #require(throws: UploadFailure.self) {
            try TusDriver.run(&other, &server, file: Self.file(200))
        }
        guard case .server(422, let message?, _) = error else { throw Failure("\(error)") }
        #expect(message.contains("100-byte upload") && !error.isRetryable)
    }

    @Test("a corrupted chunk (460) is sent again; three in a row fail the attempt, retryably")
    func checksumMismatch() throws {
        let file = Self.file(2_500)
        var server = TusServerModel()
        server.corruptPatches = 2
        var client = Self.client(file)
        #expect(try TusDriver.run(&client, &server, file: file) == .completed("memory-1"))
        #expect(server.uploads["/files/1"].map { Data($0.bytes) } == Data(file), "corrupted chunks were discarded")

        var again = TusServerModel()
        again.corruptPatches = 3
        var unlucky = Self.client(file)
        let error = try #require(throws: UploadFailure.self) { try TusDriver.run(&unlucky, &again, file: file) }
        guard case .server(460, _, _) = error else { throw Failure("\(error)") }
        #expect(error.isRetryable)
    }

    @Test("an offset conflict (409) is resolved with HEAD and the server's offset")
    func conflict() throws {
        let file = Self.file(2_000)
        var server = TusServerModel()
        var client = Self.client(file)
        guard case .send(let creation) = client.start() else { throw Failure("no creation") }
        guard case .readChunk(let range) = try client.receive(server.handle(creation), now: LedgerFixtures.epoch)
        else { throw Failure("no chunk") }
        // Another process appended the first 1,000 bytes meanwhile.
        server.uploads["/files/1"]?.bytes = Array(file[0..<1_000])
        let action = try client.chunkRead(Array(file[Int(range.lowerBound)..<Int(range.upperBound)]))
        server.requests = []
        #expect(try TusDriver.run(&client, &server, file: file, first: action) == .completed("memory-1"))
        #expect(server.requests == [.patch, .head, .patch])
        #expect(server.uploads["/files/1"].map { Data($0.bytes) } == Data(file))
    }

    @Test("an upload the server lost (404 on HEAD) is created again, once")
    func lostUpload() throws {
        let file = Self.file(1_500)
        var server = TusServerModel()
        var client = Self.client(file, location: "/files/gone")
        #expect(try TusDriver.run(&client, &server, file: file) == .completed("memory-1"))
        #expect(server.requests.prefix(2) == [.head, .post])
    }

    @Test("termination deletes the upload; a second DELETE's 404 is still terminated")
    func termination() throws {
        let file = Self.file(5_000)
        var server = TusServerModel()
        var client = Self.client(file)
        guard case .send(let creation) = client.start() else { throw Failure("no creation") }
        _ = try client.receive(server.handle(creation), now: LedgerFixtures.epoch)
        #expect(try TusDriver.run(&client, &server, file: file, first: client.terminate()) == .terminated)
        #expect(server.uploads.isEmpty)
        var late = Self.client(file, location: "/files/1")
        #expect(try TusDriver.run(&late, &server, file: file, first: late.terminate()) == .terminated)
    }

    @Test("answers tus does not allow are protocol violations, not retries")
    func violations() throws {
        let file = Self.file(10)
        let cases: [(TusResponse, String)] = [
            (TusResponse(status: 201), "no Location"),
            (TusResponse(status: 201, headers: ["Location": "/f", "Upload-Offset": "11"]), "offset past the end"),
            (TusResponse(status: 201, headers: ["Location": "/f", "Upload-Offset": "10"]), "complete, no memory"),
            (TusResponse(status: 201, headers: ["Location": "/f", "Upload-Offset": "-1"]), "negative offset"),
            (TusResponse(status: 200, headers: ["Location": "/f"]), "200 for a creation"),
        ]
        for (response, what) in cases {
            var client = Self.client(file)
            _ = client.start()
            let error = try #require(throws: UploadFailure.self, "\(what)") {
                try client.receive(response, now: LedgerFixtures.epoch)
            }
            guard case .protocolViolation = error else { throw Failure("\(what): \(error)") }
        }
        var client = Self.client(file)
        _ = client.start()
        _ = try client.receive(TusResponse(status: 201, headers: ["Location": "/f"]), now: LedgerFixtures.epoch)
        _ = try client.chunkRead(file)
        let backwards = TusResponse(status: 204, headers: ["Upload-Offset": "0"])
        #expect(throws: UploadFailure.self) { try client.receive(backwards, now: LedgerFixtures.epoch) }
    }

    @Test("a file that shrank while uploading is a local-file failure")
    func shrunkFile() throws {
        var client = Self.client(Self.file(10))
        _ = client.start()
        _ = try client.receive(TusResponse(status: 201, headers: ["Location": "/f"]), now: LedgerFixtures.epoch)
        let error = try #require(throws: UploadFailure.self) { try client.chunkRead([1, 2, 3]) }
        guard case .localFile = error else { throw Failure("\(error)") }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
