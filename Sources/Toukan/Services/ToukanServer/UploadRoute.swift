import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ToukanCore

/// `POST /upload` (the seed's contract): multipart/form-data with the audio in field `file`, streamed through
/// ToukanCore's MultipartParser into `incoming/` in constant memory, then a memory and its processing job;
/// 201 `{memory_id, status: "processing", message}`.
///
/// Refusals (JSON `{error, message}`, nothing stored): 413 when Content-Length or the stream passes the limit,
/// 415 when the Content-Type is not multipart/form-data or the file is not M4A audio, 400 for broken or truncated
/// multipart or no `file` field, 422 when the Idempotency-Key was used for another file.
struct UploadRoute: Sendable {
    let intake: MemoryIntake
    let maximumBytes: Int64
    /// Room for the multipart framing around the file in a declared Content-Length.
    static let framingAllowance: Int64 = 64 * 1024

    func handle(_ request: Request) async throws -> Response {
        do {
            let (memoryId, isNew) = try await receive(request)
            let receipt = UploadReceipt(memoryId: UUID(uuidString: memoryId)!)
            var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
            headers[.location] = "/memories/\(memoryId)"
            if !isNew { headers[HTTPField.Name("Idempotent-Replayed")!] = "true" }
            return Response(
                status: .created, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: receipt.jsonBody)))
        } catch let refusal as HTTPRefusal {
            var refusal = refusal
            // The client may still be sending: it must not reuse this connection for its next request.
            if refusal.status == .contentTooLarge { refusal.headers[.connection] = "close" }
            return refusal.response
        }
    }

    private func receive(_ request: Request) async throws -> (String, Bool) {
        if let declared = request.headers[.contentLength].flatMap({ Int64($0) }),
            declared > maximumBytes + Self.framingAllowance
        {
            throw HTTPRefusal(
                .contentTooLarge, "payload_too_large",
                "The upload declares \(declared) bytes; this server accepts files up to \(maximumBytes) bytes.")
        }
        var key: IdempotencyKey?
        if let text = request.headers[HTTPField.Name(Tus.idempotencyKeyHeader)!] {
            guard let parsed = IdempotencyKey(rawValue: text) else {
                throw HTTPRefusal(
                    .badRequest, "bad_request",
                    "Idempotency-Key must be 16 to 128 characters of letters, digits, - and _.")
            }
            key = parsed
        }
        var parser: MultipartParser
        do {
            parser = try MultipartParser(
                contentType: request.headers[.contentType] ?? "",
                limits: MultipartParser.Limits(maxBodyBytes: maximumBytes))
        } catch {
            if error.code == .notMultipart {
                throw HTTPRefusal(
                    .unsupportedMediaType, "unsupported_media_type",
                    "POST /upload takes multipart/form-data with the audio in the field \"file\".")
            }
            throw HTTPRefusal(.badRequest, "bad_request", "Broken multipart request: \(error.message).")
        }
        var file: IncomingFile?
        var fileName = "upload.m4a"
        var inFilePart = false
        var fileComplete = false
        do {
            for try await buffer in request.body {
                let chunk = Array(buffer.readableBytesView)
                for event in try parser.feed(chunk) {
                    switch event {
                    case .part(let headers):
                        inFilePart = headers.name == "file" && file == nil
                        if inFilePart {
                            file = try IncomingFile(path: intake.directory.newIncomingPath())
                            if let name = headers.fileName, !name.isEmpty { fileName = String(name.prefix(255)) }
                        }
                    case .body(let bytes):
                        if inFilePart { try file?.write(bytes) }
                    case .partEnd:
                        if inFilePart { fileComplete = true }
                        inFilePart = false
                    case .end:
                        break
                    }
                }
            }
            try parser.finish()
        } catch let error as MultipartError {
            if error.code == .bodyTooLarge {
                throw HTTPRefusal(
                    .contentTooLarge, "payload_too_large",
                    "The upload is larger than the \(maximumBytes) bytes this server accepts.")
            }
            throw HTTPRefusal(
                .badRequest, "bad_request", "Broken multipart request: \(error.message). Nothing was stored.")
        } catch let refusal as HTTPRefusal {
            throw refusal
        } catch {
            // The connection broke mid-body: nothing is kept (IncomingFile removes itself); the client retries.
            intake.logger.info("event=upload_interrupted reason=\"\(error)\"")
            throw HTTPRefusal(.badRequest, "bad_request", "The upload ended early. Nothing was stored.")
        }
        guard let file, fileComplete else {
            throw HTTPRefusal(.badRequest, "bad_request", "The multipart body has no field \"file\" with the audio.")
        }
        let digest = try file.finish()
        return try await intake.accept(
            MemoryIntake.Received(path: file.path, fileName: fileName, size: file.size, digest: digest, key: key),
            now: Date())
    }
}
