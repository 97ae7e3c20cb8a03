import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import ToukanCore
import ToukanMemoryStore

/// tus 1.0 at `/files/` (core, creation, checksum sha1, termination) by ToukanCore's TusServerPolicy: uploads are
/// rows in the memory store plus a file `tus/<id>`, whose offset is written only after its bytes are fsynced, so
/// a restarted server resumes where the last acknowledged byte ended. A PATCH cut mid-body keeps what arrived
/// (unless it carried a checksum, which then cannot be checked: it is discarded whole). The PATCH that completes
/// an upload makes the memory (the same path as `POST /upload`) and answers with a `Memory-Id` header.
struct TusRoutes: Sendable {
    let intake: MemoryIntake
    let policy: TusServerPolicy
    /// Uploads with a PATCH in progress in this process.
    private let busy = BusyUploads()

    init(intake: MemoryIntake, maximumBytes: Int64) {
        self.intake = intake
        policy = TusServerPolicy(maximumSize: maximumBytes)
    }

    private var store: any MemoryStore { intake.store }

    func add<Context: RequestContext>(to router: Router<Context>) {
        // Hummingbird matches `/files/` to `/files` too.
        router.on("/files", method: .options) { _, _ in options() }
        router.post("/files") { request, _ in await answer { try await create(request) } }
        router.on("/files/:id", method: .options) { _, _ in options() }
        router.head("/files/:id") { request, context in
            await answer { try await head(request, id: context.parameters.get("id") ?? "") }
        }
        router.patch("/files/:id") { request, context in
            await answer { try await patch(request, id: context.parameters.get("id") ?? "") }
        }
        router.delete("/files/:id") { request, context in
            await answer { try await terminate(request, id: context.parameters.get("id") ?? "") }
        }
    }

    private func options() -> Response {
        Response(status: .noContent, headers: HTTPFields(policy.optionsHeaders))
    }

    /// Runs a handler, turning refusals into their answers (with `Tus-Resumable`, as tus requires).
    private func answer(_ body: () async throws -> Response) async -> Response {
        var response: Response
        do {
            response = try await body()
        } catch let refusal as HTTPRefusal {
            response = refusal.response
        } catch let tus as TusServerError {
            response = HTTPRefusal(tus).response
        } catch {
            intake.logger.error("event=tus_failed reason=\"\(error)\"")
            response = HTTPRefusal(.internalServerError, "error", "The server failed: \(error)").response
        }
        response.headers[HTTPField.Name("Tus-Resumable")!] = Tus.version
        return response
    }

    private func create(_ request: Request) async throws -> Response {
        let creation = try policy.validateCreation(HeaderFields(request.headers))
        let id = Self.newUploadId()
        let fileName = creation.metadata.string("filename").map { String($0.prefix(255)) } ?? "upload.m4a"
        let upload = TusUpload(
            id: id, length: creation.length, metadata: request.headers[HTTPField.Name("Upload-Metadata")!] ?? "",
            fileName: fileName, idempotencyKey: creation.idempotencyKey?.rawValue, createdAt: Date())
        // Owner-only from the first byte, like every upload (the audio is someone's conversation).
        guard
            FileManager.default.createFile(
                atPath: intake.directory.tusPath(uploadId: id), contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw HTTPRefusal(.internalServerError, "storage_unavailable", "The server cannot store uploads now.")
        }
        let (holder, inserted) = try await store.insert(upload)
        if !inserted {
            try? FileManager.default.removeItem(atPath: intake.directory.tusPath(uploadId: id))
            let record = IdempotencyRule.Record(
                key: creation.idempotencyKey!, length: holder.length, digest: nil, memoryId: holder.memoryId)
            if case .conflict(let message) = IdempotencyRule.decide(
                existing: record, length: creation.length, digest: nil)
            {
                throw HTTPRefusal(.unprocessableContent, "idempotency_key_reused", message)
            }
            var headers = HTTPFields(policy.creationHeaders(location: "/files/\(holder.id)", offset: holder.offset))
            if let memoryId = holder.memoryId { headers[HTTPField.Name(Tus.memoryIdHeader)!] = memoryId }
            return Response(status: .created, headers: headers)
        }
        intake.logger.info("event=tus_created upload=\(id) length=\(creation.length)")
        return Response(status: .created, headers: HTTPFields(policy.creationHeaders(location: "/files/\(id)")))
    }

    private func find(_ id: String) async throws -> TusUpload {
        guard Self.isUploadId(id), let upload = try await store.upload(id: id) else {
            throw HTTPRefusal(
                .notFound, "not_found", "No upload /files/\(id) (finished and terminated, or never made).")
        }
        return upload
    }

    private func head(_ request: Request, id: String) async throws -> Response {
        try policy.checkVersion(HeaderFields(request.headers))
        let upload = try await find(id)
        return Response(
            status: .ok,
            headers: HTTPFields(
                policy.offsetHeaders(offset: upload.offset, length: upload.length, memoryId: upload.memoryId)))
    }

    private func patch(_ request: Request, id: String) async throws -> Response {
        let headers = HeaderFields(request.headers)
        try policy.checkVersion(headers)
        let upload = try await find(id)
        let patch = try policy.validatePatch(headers, offset: upload.offset, length: upload.length)
        guard busy.claim(id) else {
            throw HTTPRefusal(.conflict, "conflict", "Another PATCH of this upload is in progress; HEAD it and resume.")
        }
        defer { busy.release(id) }
        let path = intake.directory.tusPath(uploadId: id)
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw HTTPRefusal(.notFound, "not_found", "The upload's data is gone; create it again.")
        }
        defer { try? handle.close() }
        // Bytes past the offset are from a PATCH that was never acknowledged.
        try handle.truncate(atOffset: UInt64(patch.offset))
        try handle.seek(toOffset: UInt64(patch.offset))
        var receiver = TusPatchReceiver(patch)
        var cut = false
        do {
            for try await buffer in request.body {
                let bytes = Array(buffer.readableBytesView)
                try receiver.receive(bytes)
                try handle.write(contentsOf: Data(bytes))
            }
        } catch let tus as TusServerError {
            try handle.truncate(atOffset: UInt64(patch.offset))
            throw tus
        } catch {
            // The connection broke: keep what arrived unless a checksum was promised for the whole chunk.
            cut = true
            intake.logger.info("event=tus_patch_cut upload=\(id) received=\(receiver.received)")
        }
        let newOffset: Int64
        if cut {
            guard patch.checksum == nil else {
                try handle.truncate(atOffset: UInt64(patch.offset))
                throw HTTPRefusal(.badRequest, "bad_request", "The PATCH ended early; its checksum cannot be checked.")
            }
            newOffset = patch.offset + receiver.received
        } else {
            do {
                newOffset = try receiver.finish()
            } catch {
                try handle.truncate(atOffset: UInt64(patch.offset))
                throw error
            }
        }
        try handle.synchronize()
        guard try await store.advance(uploadId: id, from: patch.offset, to: newOffset) else {
            throw HTTPRefusal(.conflict, "conflict", "The upload moved meanwhile; HEAD it and resume.")
        }
        var memoryId: String?
        if newOffset == upload.length {
            try handle.close()
            memoryId = try await complete(upload, path: path)
        }
        return Response(
            status: .noContent,
            headers: HTTPFields(policy.offsetHeaders(offset: newOffset, length: upload.length, memoryId: memoryId)))
    }

    /// The last byte arrived: the file is sniffed and becomes a memory.
    private func complete(_ upload: TusUpload, path: String) async throws -> String {
        let (digest, prefix) = try Self.digest(of: path)
        if case .refused(let message) = AudioSniffer.sniff(prefix) {
            try? FileManager.default.removeItem(atPath: path)
            try await store.delete(uploadId: upload.id)
            throw HTTPRefusal(.unsupportedMediaType, "unsupported_media_type", message)
        }
        let incoming = intake.directory.newIncomingPath()
        try FileManager.default.moveItem(atPath: path, toPath: incoming)
        let (memoryId, _) = try await intake.accept(
            MemoryIntake.Received(
                path: incoming, fileName: upload.fileName, size: upload.length, digest: digest,
                key: upload.idempotencyKey.flatMap(IdempotencyKey.init(rawValue:))),
            now: Date())
        try await store.complete(uploadId: upload.id, memoryId: memoryId)
        return memoryId
    }

    private func terminate(_ request: Request, id: String) async throws -> Response {
        try policy.checkVersion(HeaderFields(request.headers))
        let upload = try await find(id)
        try await store.delete(uploadId: upload.id)
        try? FileManager.default.removeItem(atPath: intake.directory.tusPath(uploadId: id))
        intake.logger.info("event=tus_terminated upload=\(id)")
        return Response(status: .noContent)
    }

    /// SHA-256 of a file read in 1 MiB pieces, and its first bytes.
    static func digest(of path: String) throws -> ([UInt8], [UInt8]) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw HTTPRefusal(.notFound, "not_found", "The upload's data is gone; create it again.")
        }
        defer { try? handle.close() }
        var hash = SHA256()
        var prefix: [UInt8] = []
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
            if prefix.count < AudioSniffer.bytesNeeded {
                prefix.append(contentsOf: data.prefix(AudioSniffer.bytesNeeded - prefix.count))
            }
            hash.update(data: data)
        }
        return (Array(hash.finalize()), prefix)
    }

    static func newUploadId() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func isUploadId(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// The uploads with a PATCH in progress in this process (a second PATCH of one upload is refused with 409).
final class BusyUploads: Sendable {
    private let ids = Mutex<Set<String>>([])

    func claim(_ id: String) -> Bool { ids.withLock { $0.insert(id).inserted } }

    func release(_ id: String) { _ = ids.withLock { $0.remove(id) } }
}
