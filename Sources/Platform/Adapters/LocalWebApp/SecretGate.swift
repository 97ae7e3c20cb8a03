import HTTPTypes
public import Hummingbird
import NIOCore

/// Lets through only requests under `/s/<secret>/`, with that prefix taken off, to the routes inside (which are
/// written as if the app lived at `/`). Everything else gets 403 and a page saying where the right address is;
/// `/s/<secret>` without the slash is redirected so relative URLs resolve.
public struct SecretGate<Inner: HTTPResponderBuilder>: HTTPResponderBuilder
where Inner.Responder.Context: RequestContext {
    public typealias Context = Inner.Responder.Context

    let secret: WebSecret
    let inner: Inner
    let refusal: String

    /// - Parameter refusal: What a refused visitor reads: where to find the address with the secret.
    public init(secret: WebSecret, refusal: String, inner: Inner) {
        self.secret = secret
        self.inner = inner
        self.refusal = refusal
    }

    public func buildResponder() -> Responder {
        Responder(secret: secret, inner: inner.buildResponder(), refusal: refusal)
    }

    public struct Responder: HTTPResponder {
        let secret: WebSecret
        let inner: Inner.Responder
        let refusal: String

        public func respond(to request: Request, context: Context) async throws -> Response {
            var response = try await gate(request, context: context)
            SecurityHeaders.apply(to: &response)
            return response
        }

        private func gate(_ request: Request, context: Context) async throws -> Response {
            let path = request.head.path ?? "/"
            let parts = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            // "/s/<secret>/rest" splits into "", "s", "<secret>/rest"...; take the secret up to the next / or ?.
            guard parts.count >= 3, parts[0].isEmpty, parts[1] == "s" else { return refuse() }
            let tail = parts[2]
            let end = tail.firstIndex { $0 == "/" || $0 == "?" } ?? tail.endIndex
            guard secret.matches(tail[..<end]) else { return refuse() }
            let rest = tail[end...]
            guard rest.hasPrefix("/") else {
                return Response(
                    status: .seeOther,
                    headers: [.location: "/s/\(secret.text)/\(rest)", .cacheControl: "no-store"])
            }
            var head = request.head
            head.path = String(rest)
            return try await inner.respond(to: Request(head: head, body: request.body), context: context)
        }

        private func refuse() -> Response {
            let page = """
                <!doctype html><html lang="en"><meta charset="utf-8"><title>Address needed</title>
                <p>\(refusal)</p></html>
                """
            return Response(
                status: .forbidden,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
        }
    }
}
