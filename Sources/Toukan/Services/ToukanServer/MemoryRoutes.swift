import CanonicalJSON
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ToukanCore
import ToukanMemoryStore

/// The review side: `GET /memories` (JSON, newest first, in pages), `GET /memories/{id}`, `GET
/// /memories/{id}/audio` (the file as `audio/mp4`).
struct MemoryRoutes: Sendable {
    let intake: MemoryIntake

    /// Memories per page unless `limit` says otherwise, and the most a page holds.
    static let pageSize = 500

    func add<Context: RequestContext>(to router: Router<Context>) {
        // A page is a JSON array; a full page has `Link: </memories?limit=N&after=ID>; rel="next"` (RFC 8288)
        // to the next one, so nothing is cut off silently.
        router.get("/memories") { request, _ in
            let query = request.uri.queryParameters
            var limit = Self.pageSize
            if let text = query["limit"] {
                guard let value = Int(String(text)), (1...Self.pageSize).contains(value) else {
                    return HTTPRefusal(
                        .badRequest, "invalid_limit", "limit is a number of memories per page, 1 to \(Self.pageSize)."
                    ).response
                }
                limit = value
            }
            var after: String?
            if let text = query["after"] {
                guard let id = UUID(uuidString: String(text))?.uuidString.lowercased(),
                    try await intake.store.memory(id: id) != nil
                else {
                    return HTTPRefusal(
                        .badRequest, "invalid_cursor",
                        "after names no memory: use the link the previous page gave (its Link header)."
                    ).response
                }
                after = id
            }
            let memories = try await intake.store.memories(limit: limit, after: after)
            var response = Self.json(.array(memories.map(Self.json)))
            if memories.count == limit, let last = memories.last {
                response.headers[HTTPField.Name("Link")!] = "</memories?limit=\(limit)&after=\(last.id)>; rel=\"next\""
            }
            return response
        }
        router.get("/memories/:id") { _, context in
            guard let memory = try await memory(context.parameters.get("id")) else { return Self.notFound }
            return Self.json(Self.json(memory))
        }
        router.get("/memories/:id/audio") { request, context in
            guard let memory = try await memory(context.parameters.get("id")) else { return Self.notFound }
            return try await audio(memory, range: request.headers[.range], context: context)
        }
    }

    /// The memory's file as `audio/mp4`; one byte range when asked (206), so a player can seek.
    private func audio(_ memory: Memory, range header: String?, context: some RequestContext) async throws
        -> Response
    {
        let path = intake.directory.absolute(memory.path)
        let range = ByteRangeRequest(header: header, size: memory.size)
        var headers: HTTPFields = [
            .contentType: "audio/mp4", .acceptRanges: "bytes", .cacheControl: "private, max-age=3600",
        ]
        switch range {
        case .whole:
            return Response(
                status: .ok, headers: headers, body: try await FileIO().loadFile(path: path, context: context))
        case .partial(let bytes):
            headers[.contentRange] = range.contentRange(size: memory.size)
            let body = try await FileIO().loadFile(
                path: path, range: Int(bytes.lowerBound)...Int(bytes.upperBound), context: context)
            return Response(status: .partialContent, headers: headers, body: body)
        case .unsatisfiable:
            return HTTPRefusal(
                .rangeNotSatisfiable, "range_not_satisfiable",
                "The range asked for starts past the end of the \(memory.size)-byte file.",
                headers: [.acceptRanges: "bytes", .contentRange: range.contentRange(size: memory.size) ?? ""]
            ).response
        }
    }

    private func memory(_ id: String?) async throws -> Memory? {
        guard let id, let uuid = UUID(uuidString: id) else { return nil }
        return try await intake.store.memory(id: uuid.uuidString.lowercased())
    }

    static var notFound: Response {
        HTTPRefusal(.notFound, "not_found", "No such memory.").response
    }

    static func json(_ value: JSONValue) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.canonicalBytes())))
    }

    static func json(_ memory: Memory) -> JSONValue {
        func number(_ value: Double?) -> JSONValue {
            value.map { .number(JSONNumber(($0 * 1000).rounded() / 1000)) } ?? .null
        }
        return .object([
            "memory_id": .string(memory.id),
            "file_name": .string(memory.fileName),
            "size": .number(JSONNumber(Double(memory.size))),
            "status": .string(memory.status.rawValue),
            "duration": number(memory.duration),
            "loudness": number(memory.loudness),
            "transcript": memory.transcript.map(JSONValue.string) ?? .null,
            "error": memory.error.map(JSONValue.string) ?? .null,
            "created_at": .string(ISO8601DateFormatter().string(from: memory.createdAt)),
            "audio": .string("/memories/\(memory.id)/audio"),
        ])
    }
}
