import Foundation
import TestSupport
import Testing
import ToukanCore

@Suite("POST /upload multipart: head/tail around streamed bytes, and a strict, bounded, incremental parser")
struct MultipartTests {
    static let boundary = MultipartUploadBody.boundary(randomBytes: [UInt8](0..<16))

    /// Feeds `bytes` in chunks of random sizes (1 to `maxChunk`) and collects the parts.
    static func parse(
        _ bytes: [UInt8], boundary: String = boundary, limits: MultipartParser.Limits = .init(), seed: UInt64 = 1,
        maxChunk: Int = 64
    ) throws -> [(headers: MultipartPartHeaders, body: [UInt8])] {
        var parser = try MultipartParser(boundary: boundary, limits: limits)
        var random = SplitMix64(seed: seed)
        var parts: [(headers: MultipartPartHeaders, body: [UInt8])] = []
        var index = 0
        var ended = false
        while index < bytes.count {
            let size = Int.random(in: 1...maxChunk, using: &random)
            let chunk = Array(bytes[index..<min(bytes.count, index + size)])
            index += chunk.count
            for event in try parser.feed(chunk) {
                switch event {
                case .part(let headers): parts.append((headers, []))
                case .body(let slice): parts[parts.count - 1].body += slice
                case .partEnd: break
                case .end: ended = true
                }
            }
        }
        try parser.finish()
        #expect(ended && parser.isComplete)
        return parts
    }

    static func upload(_ file: [UInt8], fileName: String = "toukan_2024-01-15T14-30-00.m4a") throws -> [UInt8] {
        let body = try MultipartUploadBody(boundary: boundary, fileName: fileName)
        return body.head + file + body.tail
    }

    @Test("the head and tail are exactly the seed's form: field file, the file name, audio/mp4")
    func headAndTail() throws {
        let body = try MultipartUploadBody(boundary: "b0undary", fileName: "toukan_2024-01-15T14-30-00.m4a")
        #expect(
            String(decoding: body.head, as: UTF8.self)
                == "--b0undary\r\nContent-Disposition: form-data; name=\"file\"; "
                + "filename=\"toukan_2024-01-15T14-30-00.m4a\"\r\nContent-Type: audio/mp4\r\n\r\n")
        #expect(String(decoding: body.tail, as: UTF8.self) == "\r\n--b0undary--\r\n")
        #expect(body.contentType == "multipart/form-data; boundary=b0undary")
        #expect(body.contentLength(fileSize: 1_000) == Int64(body.head.count + 1_000 + body.tail.count))
        #expect(Self.boundary == "toukan-000102030405060708090a0b0c0d0e0f")
    }

    @Test("a boundary or a name that would break the body is refused")
    func badBuilderInput() {
        for (boundary, name) in [
            ("", "a.m4a"), (String(repeating: "x", count: 71), "a.m4a"), ("ends ", "a.m4a"),
            ("semi;colon", "a.m4a"), ("ok", "quo\"te.m4a"), ("ok", "new\r\nline.m4a"), ("ok", ""),
        ] {
            #expect(throws: MultipartError.self, "\(boundary) \(name)") {
                try MultipartUploadBody(boundary: boundary, fileName: name)
            }
        }
    }

    @Test("build → parse round trip with random chunking: the file comes back byte for byte", arguments: 0..<12)
    func roundTrip(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        // Audio-like bytes salted with pieces of the delimiter, so the search is tested where it can go wrong.
        var file = random.bytes(Int.random(in: 0...5_000, using: &random))
        let traps = ["\r\n", "\r\n--", "\r\n--toukan-", "\r\n--" + Self.boundary.dropLast(), "\r\r\n--\r\n-"]
        for trap in traps {
            let at = Int.random(in: 0...file.count, using: &random)
            file.insert(contentsOf: Array(trap.utf8), at: at)
        }
        let parts = try Self.parse(try Self.upload(file), seed: seed, maxChunk: Int(seed % 5) * 40 + 1)
        #expect(parts.count == 1)
        #expect(parts.first?.headers.name == "file")
        #expect(parts.first?.headers.fileName == "toukan_2024-01-15T14-30-00.m4a")
        #expect(parts.first?.headers.contentType == "audio/mp4")
        #expect(parts.first.map { Data($0.body) } == Data(file), "the file's bytes, in order")
    }

    @Test("fed one byte at a time, the body still comes back; body slices point into the chunk without copies")
    func byteByByteAndSlices() throws {
        let file = Array("\r\n--toukan-0001 is not the boundary\r\n".utf8)
        #expect(try Self.parse(try Self.upload(file), maxChunk: 1).first.map { Data($0.body) } == Data(file))
        var parser = try MultipartParser(boundary: Self.boundary)
        let whole = try Self.upload(file)
        let events = try parser.feed(whole)
        let slices = events.compactMap { event -> ArraySlice<UInt8>? in
            if case .body(let slice) = event { return slice }
            return nil
        }
        #expect(slices.count == 1)
        let head = try MultipartUploadBody(boundary: Self.boundary, fileName: "toukan_2024-01-15T14-30-00.m4a").head
        #expect(slices.first?.indices == head.count..<(head.count + file.count))
    }

    @Test("an empty file, several parts, a preamble, transport padding and an epilogue")
    func shapes() throws {
        let text =
            "preamble to ignore\r\n--B \t\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n"
            + "--B\r\ncontent-disposition: form-data; name=file; filename=\"a\\\"b.m4a\"\r\n\r\n\r\n--B--\r\nepilogue"
        let parts = try Self.parse(Array(text.utf8), boundary: "B", maxChunk: 7)
        #expect(parts.map(\.headers.name) == ["note", "file"])
        #expect(parts.map(\.body) == [Array("hi".utf8), []])
        #expect(parts[1].headers.fileName == "a\"b.m4a")
    }

    @Test("the boundary is read from the Content-Type, quoted or not; a missing one is a clear error")
    func contentType() throws {
        #expect(try MultipartParser(contentType: "multipart/form-data; boundary=abc").boundary == "abc")
        #expect(try MultipartParser(contentType: "Multipart/Form-Data;boundary=\"a b:c\"").boundary == "a b:c")
        let missing = try #require(throws: MultipartError.self) {
            try MultipartParser(contentType: "multipart/form-data; charset=utf-8")
        }
        #expect(missing.code == .missingBoundary)
        let wrong = try #require(throws: MultipartError.self) { try MultipartParser(contentType: "audio/mp4") }
        #expect(wrong.code == .notMultipart)
        let bad = try #require(throws: MultipartError.self) {
            try MultipartParser(contentType: "multipart/form-data; boundary=" + String(repeating: "a", count: 71))
        }
        #expect(bad.code == .invalidBoundary)
    }

    static func failure(_ text: String, limits: MultipartParser.Limits = .init(), maxChunk: Int = 16) -> MultipartError?
    {
        do {
            _ = try parse(Array(text.utf8), boundary: "B", limits: limits, maxChunk: maxChunk)
            return nil
        } catch let error as MultipartError {
            return error
        } catch {
            return nil
        }
    }

    static let disposition = "Content-Disposition: form-data; name=\"file\"\r\n"

    @Test(
        "broken multipart is refused with a code that says what broke",
        arguments: [
            ("no boundary at all", "just some bytes", MultipartError.Code.boundaryNotFound),
            ("truncated body", "--B\r\n\(disposition)\r\nabc", .truncated),
            ("truncated after the delimiter", "--B\r\n\(disposition)\r\nabc\r\n--B", .truncated),
            ("truncated headers", "--B\r\nContent-Disp", .truncated),
            ("junk after a boundary", "--B\r\n\(disposition)\r\nabc\r\n--Bx\r\n", .malformedDelimiter),
            ("single dash close", "--B\r\n\(disposition)\r\nabc\r\n--B-x", .malformedDelimiter),
            ("closing with no part", "--B--\r\n", .malformedHeader),
            ("no Content-Disposition", "--B\r\nContent-Type: audio/mp4\r\n\r\nx\r\n--B--", .malformedHeader),
            ("not form-data", "--B\r\nContent-Disposition: inline; name=a\r\n\r\nx\r\n--B--", .malformedHeader),
            ("no name", "--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--", .malformedHeader),
            ("unclosed quote", "--B\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--B--", .malformedHeader),
            ("folded header", "--B\r\n\(disposition) folded\r\n\r\nx\r\n--B--", .malformedHeader),
            ("bare LF", "--B\r\nX-A: 1\n\(disposition)\r\nx\r\n--B--", .malformedHeader),
            ("no colon", "--B\r\nnonsense\r\n\(disposition)\r\nx\r\n--B--", .malformedHeader),
        ])
    func broken(_ what: String, text: String, code: MultipartError.Code) {
        #expect(Self.failure(text)?.code == code, "\(what)")
    }

    @Test("limits: header size and count, parts, preamble, body bytes")
    func limits() {
        let longHeader = "--B\r\nX-Long: \(String(repeating: "a", count: 9_000))\r\n\(Self.disposition)\r\nx\r\n--B--"
        #expect(Self.failure(longHeader, maxChunk: 4_096)?.code == .headerTooLarge)
        let manyHeaders = "--B\r\n" + String(repeating: "X-A: 1\r\n", count: 16) + Self.disposition + "\r\nx\r\n--B--"
        #expect(Self.failure(manyHeaders)?.code == .tooManyHeaders)
        let part = "\r\n--B\r\n\(Self.disposition)\r\nx"
        #expect(
            Self.failure(String(repeating: part, count: 3) + "\r\n--B--", limits: .init(maxParts: 2))?.code
                == .tooManyParts)
        #expect(Self.failure(String(repeating: "p", count: 2_000) + part + "\r\n--B--")?.code == .boundaryNotFound)
        #expect(
            Self.failure("--B\r\n\(Self.disposition)\r\n12345\r\n--B--", limits: .init(maxBodyBytes: 4))?.code
                == .bodyTooLarge)
        #expect(Self.failure("--B\r\n\(Self.disposition)\r\n1234\r\n--B--", limits: .init(maxBodyBytes: 4)) == nil)
    }

    @Test("after an error the parser stays failed")
    func staysFailed() throws {
        var parser = try MultipartParser(boundary: "B")
        #expect(throws: MultipartError.self) { try parser.feed(Array("--Bx".utf8)) }
        let error = try #require(throws: MultipartError.self) { try parser.feed(Array("\r\n".utf8)) }
        #expect(error.code == .malformedDelimiter)
    }
}
