import CanonicalJSON
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ToukanCore
import ToukanMemoryStore

/// The review side: `GET /memories` (JSON, newest first), `GET /memories/{id}`, `GET /memories/{id}/audio` (the
/// file as `audio/mp4`).
struct MemoryRoutes: Sendable {
    let intake: MemoryIntake

    func add<Context: RequestContext>(to router: Router<Context>) {
        router.get("/memories") { _, _ in
            let memories = try await intake.store.memories()
            return Self.json(.array(memories.map(Self.json)))
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
