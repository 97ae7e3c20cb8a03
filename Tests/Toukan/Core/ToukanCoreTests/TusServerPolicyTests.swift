import Foundation
import Testing
import ToukanCore

@Suite("tus server rules: versions, lengths, offsets, content types, checksums, metadata")
struct TusServerPolicyTests {
    let policy = TusServerPolicy(maximumSize: 1_000_000)
    static let version: HeaderFields = ["Tus-Resumable": "1.0.0"]

    func headers(_ extra: [(String, String)]) -> HeaderFields {
        var headers = Self.version
        for (name, value) in extra { headers.add(name, value) }
        return headers
    }

    @Test("OPTIONS advertises version, extensions, maximum size and checksum algorithms")
    func options() {
        let headers = policy.optionsHeaders
        #expect(headers["Tus-Version"] == "1.0.0" && headers["Tus-Resumable"] == "1.0.0")
        #expect(headers["Tus-Extension"] == "creation,checksum,termination")
        #expect(headers["Tus-Max-Size"] == "1000000" && headers["Tus-Checksum-Algorithm"] == "sha1")
    }

    @Test("creation: the length, metadata and key are read")
    func creation() throws {
        let key = IdempotencyKey(randomBytes: [UInt8](repeating: 1, count: 16))
        let metadata = TusMetadata(fileName: "a.m4a", fileType: "audio/mp4", idempotencyKey: key)
        let creation = try policy.validateCreation(
            headers([("Upload-Length", "1000000"), ("Upload-Metadata", metadata.headerValue)]))
        #expect(creation.length == 1_000_000 && creation.idempotencyKey == key)
        #expect(creation.metadata.string("filename") == "a.m4a")
    }

    @Test(
        "creation refusals and their statuses",
        arguments: [
            ([("Upload-Length", "5")], 412, false), ([("Tus-Resumable", "0.2.2"), ("Upload-Length", "5")], 412, false),
            ([], 400, true), ([("Upload-Length", "")], 400, true), ([("Upload-Length", "-5")], 400, true),
            ([("Upload-Length", "+5")], 400, true), ([("Upload-Length", "5"), ("Upload-Length", "5")], 400, true),
            ([("Upload-Length", "0")], 400, true), ([("Upload-Length", "99999999999999999999")], 400, true),
            ([("Upload-Length", "1000001")], 413, true), ([("Upload-Defer-Length", "1")], 400, true),
            ([("Upload-Length", "5"), ("Content-Length", "5")], 400, true),
            ([("Upload-Length", "5"), ("Upload-Metadata", "filename !!!")], 400, true),
            ([("Upload-Length", "5"), ("Idempotency-Key", "short")], 400, true),
            (
                [
                    ("Upload-Length", "5"), ("Idempotency-Key", "aaaaaaaaaaaaaaaaaaaa"),
                    ("Upload-Metadata", "idempotency-key YmJiYmJiYmJiYmJiYmJiYmJiYmI="),
                ], 400, true
            ),
        ])
    func creationRefused(extra: [(String, String)], status: Int, withVersion: Bool) {
        var headers = withVersion ? Self.version : HeaderFields()
        for (name, value) in extra { headers.add(name, value) }
        do {
            _ = try policy.validateCreation(headers)
            Issue.record("accepted \(extra)")
        } catch {
            #expect(error.status == status, "\(extra): \(error.message)")
            if status == 412 { #expect(error.headers["Tus-Version"] == "1.0.0") }
        }
    }

    @Test("PATCH: offset, content type, length and checksum are checked")
    func patch() throws {
        let ok = headers([
            ("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "100"), ("Content-Length", "50"),
            ("Upload-Checksum", "sha1 qZk+NkcGgWq6PiVxeFDCbJzQ2J0="),
        ])
        let plan = try policy.validatePatch(ok, offset: 100, length: 150)
        #expect(plan.offset == 100 && plan.remaining == 50)
        #expect(plan.checksum == TusChecksum(of: Array("abc".utf8)), "SHA-1(abc) = a9993e36…")

        func status(_ change: (inout HeaderFields) -> Void, offset: Int64 = 100, length: Int64 = 150) -> Int? {
            var headers = ok
            change(&headers)
            do {
                _ = try policy.validatePatch(headers, offset: offset, length: length)
                return nil
            } catch { return error.status }
        }
        #expect(status({ $0.set("Tus-Resumable", "2") }) == 412)
        #expect(status({ $0.set("Content-Type", "application/octet-stream") }) == 415)
        #expect(status({ $0.set("Upload-Offset", "99") }) == 409)
        #expect(status({ $0.set("Upload-Offset", "x") }) == 400)
        #expect(status({ $0.set("Content-Length", "51") }) == 413)
        #expect(status({ $0.set("Upload-Checksum", "md5 qZk+NkcGgWq6PiVxeFDCbJzQ2J0=") }) == 400)
        #expect(status({ $0.set("Upload-Checksum", "sha1 not-base64") }) == 400)
        #expect(status({ $0.set("Upload-Checksum", "sha1 YWJj") }) == 400, "base64, but not 20 bytes")
    }

    @Test("a PATCH body is counted against the length and its checksum checked at the end (460)")
    func receiver() throws {
        let body = Array("abc".utf8)
        let plan = try policy.validatePatch(
            headers([
                ("Content-Type", Tus.patchContentType), ("Upload-Offset", "10"),
                ("Upload-Checksum", TusChecksum(of: body).headerValue),
            ]), offset: 10, length: 13)
        var receiver = TusPatchReceiver(plan)
        try receiver.receive(body.prefix(1))
        try receiver.receive(body.dropFirst())
        #expect(try receiver.finish() == 13)

        var corrupted = TusPatchReceiver(plan)
        try corrupted.receive(Array("abd".utf8))
        #expect(
            throws: TusServerError(status: 460, "the chunk's SHA-1 does not match Upload-Checksum; it was discarded")
        ) {
            try corrupted.finish()
        }
        var tooLong = TusPatchReceiver(plan)
        let error = try #require(throws: TusServerError.self) { try tooLong.receive(Array("abcd".utf8)) }
        #expect(error.status == 413)
    }

    @Test("metadata: round trip, keys without values, bounds and malformed pairs")
    func metadata() throws {
        let parsed = try TusMetadata(parsing: "filename dG91a2FuLm00YQ==,is_confidential, filetype YXVkaW8vbXA0")
        #expect(parsed.string("filename") == "toukan.m4a" && parsed.string("filetype") == "audio/mp4")
        #expect(parsed["is_confidential"] == .some(nil) && parsed["absent"] == nil)
        #expect(try TusMetadata(parsing: parsed.headerValue) == parsed)
        #expect(try TusMetadata(parsing: "").entries.isEmpty)
        for bad in [
            "a b c", "a !!!", "a dGVzdA==,a dGVzdA==", ",", "a dGVzdA", String(repeating: "k,", count: 40) + "k",
            "k " + String(repeating: "A", count: 5_000),
        ] {
            #expect(throws: TusServerError.self, "\(bad.prefix(30))") { try TusMetadata(parsing: bad) }
        }
    }
}
