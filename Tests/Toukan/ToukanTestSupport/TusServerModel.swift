public import Foundation
public import ToukanCore

/// A tiny tus server made of the core's server rules, in memory, with faults to inject: what the client machine
/// talks to in the core's tests, and what the in-test HTTP server of the uploader's tests serves at `/files/`.
public struct TusServerModel: Sendable {
    public struct StoredUpload: Sendable {
        public var length: Int64
        public var bytes: [UInt8] = []
        public var metadata: TusMetadata
        public var key: IdempotencyKey?
        public var memoryId: String?
    }

    public var policy: TusServerPolicy
    public var uploads: [String: StoredUpload] = [:]
    public var memoriesMade = 0
    /// Flip a byte of the next N PATCH bodies in transit.
    public var corruptPatches = 0
    /// Keep only this many bytes of the next PATCH, then "cut the connection" (the response is lost).
    public var cutNextPatchAfter: Int?
    /// The methods received, in order.
    public var requests: [TusMethod] = []

    public init(maximumSize: Int64 = 10_000_000) {
        policy = TusServerPolicy(maximumSize: maximumSize)
    }

    public mutating func handle(_ request: TusRequest) -> TusResponse {
        requests.append(request.method)
        do throws(TusServerError) {
            switch request.method {
            case .options:
                return TusResponse(status: 204, headers: policy.optionsHeaders)
            case .post:
                let creation = try policy.validateCreation(request.headers)
                let existing = uploads.first { $0.value.key != nil && $0.value.key == creation.idempotencyKey }
                if let existing {
                    let record = IdempotencyRule.Record(
                        key: existing.value.key!, length: existing.value.length, digest: nil,
                        memoryId: existing.value.memoryId)
                    switch IdempotencyRule.decide(existing: record, length: creation.length, digest: nil) {
                    case .conflict(let message): throw TusServerError(status: 422, message)
                    case .new, .repeatOf: break
                    }
                    var headers = policy.creationHeaders(
                        location: existing.key, offset: Int64(existing.value.bytes.count))
                    if let memory = existing.value.memoryId { headers.add(Tus.memoryIdHeader, memory) }
                    return TusResponse(status: 201, headers: headers)
                }
                let location = "/files/\(uploads.count + 1)"
                uploads[location] = StoredUpload(
                    length: creation.length, metadata: creation.metadata, key: creation.idempotencyKey)
                return TusResponse(status: 201, headers: policy.creationHeaders(location: location))
            case .head:
                try policy.checkVersion(request.headers)
                guard let upload = uploads[request.target] else { throw TusServerError(status: 404, "no such upload") }
                return TusResponse(
                    status: 200,
                    headers: policy.offsetHeaders(
                        offset: Int64(upload.bytes.count), length: upload.length, memoryId: upload.memoryId))
            case .patch:
                guard var upload = uploads[request.target] else { throw TusServerError(status: 404, "no such upload") }
                let patch = try policy.validatePatch(
                    request.headers, offset: Int64(upload.bytes.count), length: upload.length)
                var body = request.body
                if corruptPatches > 0, !body.isEmpty {
                    corruptPatches -= 1
                    body[0] ^= 0xFF
                }
                var receiver = TusPatchReceiver(patch)
                if let cut = cutNextPatchAfter {
                    cutNextPatchAfter = nil
                    // A cut: the bytes that arrived are kept (no checksum can be checked on half a chunk).
                    upload.bytes += body.prefix(cut)
                    uploads[request.target] = upload
                    return TusResponse(status: 0)
                }
                try receiver.receive(body)
                let newOffset = try receiver.finish()
                upload.bytes += body
                if newOffset == upload.length, upload.memoryId == nil {
                    memoriesMade += 1
                    upload.memoryId = "memory-\(memoriesMade)"
                }
                uploads[request.target] = upload
                return TusResponse(
                    status: 204,
                    headers: policy.offsetHeaders(offset: newOffset, length: upload.length, memoryId: upload.memoryId))
            case .delete:
                try policy.checkVersion(request.headers)
                guard uploads.removeValue(forKey: request.target) != nil else {
                    throw TusServerError(status: 404, "no such upload")
                }
                return TusResponse(status: 204, headers: ["Tus-Resumable": Tus.version])
            }
        } catch {
            var headers = error.headers
            headers.add("Tus-Resumable", Tus.version)
            return TusResponse(
                status: error.status, headers: headers,
                body: UploadErrorBody(error: "tus", message: error.message).jsonBody)
        }
    }
}
