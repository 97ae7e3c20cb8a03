import Foundation
import HTTPTypes
public import Hummingbird
import Logging
public import NIOCore
import OpenAPIRuntime

/// The request context of the hub's router: Hummingbird's storage and the peer's address.
public struct HubRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Who is calling: what the generated handlers cannot see (the peer's address and the credentials in headers),
/// set for each request by ``HubGate``.
struct Caller: Sendable {
    /// The peer's IP address (the key of per-client limits).
    var address: String
    var isLoopback: Bool
    var bearer: String?
    var adminKey: String?

    @TaskLocal static var current: Caller?
}

/// In front of every route: bounds request bodies (4 KB: nothing in the API needs more), names the caller for
/// the handlers, and turns what the generated code or the router refuses into the spec's `Error` JSON — a body
/// that does not decode is 422, an unknown path 404, a body too large 413 — never a bare 500.
struct HubGate<Context: RemoteAddressRequestContext>: RouterMiddleware {
    static var maximumBody: Int { 4 * 1024 }
    let logger: Logger
    let metrics: HubMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        var response = try await answer(request, context: context, next: next)
        Self.unescapeHeaders(&response.headers)
        metrics.request(endpoint: HubRoutes.template(for: request.uri.path[...]) ?? "other", took: .now - started)
        return response
    }

    private func answer(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: Self.maximumBody)
        } catch {
            return Self.error(
                .contentTooLarge, "The request body is larger than 4 KB: nothing in this API needs more.",
                code: "payload_too_large")
        }
        // Bodies are JSON, said so by Content-Type (the generated code would read a body that names no type).
        if body.readableBytes > 0, !Self.isJSON(request.headers[.contentType]) {
            return Self.error(
                .unprocessableContent,
                "The request does not match the API: send the body as JSON with Content-Type: application/json.",
                code: "invalid_request")
        }
        let address = context.remoteAddress
        let caller = Caller(
            address: address?.ipAddress ?? "unknown", isLoopback: address.map(Self.isLoopback) ?? false,
            bearer: Self.bearer(request.headers[.authorization]), adminKey: request.headers[HTTPField.Name.adminKey])
        do {
            return try await Caller.$current.withValue(caller) { try await next(request, context) }
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = HubRoutes.methods(for: request.uri.path[...])
            guard allowed.isEmpty || allowed.contains(request.method.rawValue) else {
                var answer = Self.error(
                    .methodNotAllowed, "\(request.uri.path) answers to \(allowed.joined(separator: ", ")) only.",
                    code: "method_not_allowed")
                answer.headers[.allow] = allowed.joined(separator: ", ")
                return answer
            }
            return Self.error(.notFound, "There is no such endpoint: see docs/api/mobile-api.yaml.", code: "not_found")
        } catch let error as HTTPError where error.status == .methodNotAllowed {
            return Self.error(.methodNotAllowed, "That method is not allowed here.", code: "method_not_allowed")
        } catch let error as ServerError where error.operationInput != nil {
            // The request was read and the handler failed: the hub (its database, its disk) failed, not the caller.
            logger.error(
                "a request could not be answered",
                metadata: ["operation": "\(error.operationID)", "reason": "\(error.underlyingError)"])
            return Self.error(
                .serviceUnavailable,
                "The hub could not answer: something on the hub failed (its database or its disk). Nothing you sent "
                    + "was wrong: try again later; the hub's owner should check its log.",
                code: "hub_unavailable")
        } catch let error as ServerError {
            // the generated code could not read the request: a missing or mistyped field, JSON that is not JSON
            logger.debug("refused a request it could not read", metadata: ["operation": "\(error.operationID)"])
            return Self.error(
                .unprocessableContent, "The request does not match the API: \(Self.reason(error))",
                code: "invalid_request")
        }
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`), in any case.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first else { return false }
        return type.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    /// The generated server writes header values URI-encoded (`private%2C%20max-age%3D86400`, swift-openapi-runtime
    /// encodes every header in the `simple` style); the spec's headers are plain text, so they go out decoded.
    static func unescapeHeaders(_ headers: inout HTTPFields) {
        for name in [HTTPField.Name.cacheControl, .wwwAuthenticate] {
            guard let value = headers[name], value.contains("%"), let plain = value.removingPercentEncoding else {
                continue
            }
            headers[name] = plain
        }
    }

    static func bearer(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// 127.0.0.0/8, ::1, or an IPv4 loopback address mapped into IPv6.
    static func isLoopback(_ address: SocketAddress) -> Bool {
        guard let ip = address.ipAddress else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }

    /// What went wrong, in a line (the decoding error's own words, without the generated code's type names).
    static func reason(_ error: ServerError) -> String {
        let text = "\(error.underlyingError)"
        if text.contains("keyNotFound") || text.contains("No value associated with key") {
            return "a required field is missing."
        }
        if text.contains("typeMismatch") || text.contains("valueNotFound") { return "a field has the wrong type." }
        if text.contains("dataCorrupted") || text.contains("not valid JSON") { return "the body is not valid JSON." }
        return "it could not be read (\(String(text.prefix(120))))."
    }

    static func error(_ status: HTTPResponse.Status, _ detail: String, code: String) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = (try? encoder.encode(["detail": detail, "code": code])) ?? Data(#"{"detail":"error"}"#.utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension HTTPField.Name {
    static let adminKey = HTTPField.Name("X-Argus-Admin")!
}
