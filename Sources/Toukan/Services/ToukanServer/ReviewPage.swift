import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The review page (`Public/`: index.html, app.js, style.css, icon.svg; plain files, no build step), read once from
/// the bundle and served from memory. Only these paths exist.
struct ReviewPage: Sendable {
    static let files: [(path: String, name: String, type: String)] = [
        ("/", "index.html", "text/html; charset=utf-8"),
        ("/app.js", "app.js", "text/javascript; charset=utf-8"),
        ("/style.css", "style.css", "text/css; charset=utf-8"),
        ("/icon.svg", "icon.svg", "image/svg+xml"),
    ]
    let bodies: [String: ByteBuffer]

    static func bundled() throws -> ReviewPage {
        guard let resources = Bundle.module.resourceURL else {
            throw ToukanServerStartupError("the ToukanServer resource bundle is missing: rebuild toukan-server")
        }
        var bodies: [String: ByteBuffer] = [:]
        for file in files {
            let url = resources.appendingPathComponent("Public").appendingPathComponent(file.name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw ToukanServerStartupError("the review page is missing \(url.path): rebuild toukan-server")
            }
            bodies[file.path] = ByteBuffer(bytes: data)
        }
        return ReviewPage(bodies: bodies)
    }

    func add<Context: RequestContext>(to router: Router<Context>) {
        for file in Self.files {
            let body = bodies[file.path] ?? ByteBuffer()
            router.get(RouterPath(file.path)) { _, _ in
                Response(
                    status: .ok, headers: [.contentType: file.type, .cacheControl: "no-cache"],
                    body: ResponseBody(byteBuffer: body))
            }
        }
    }
}

/// The page's browser protections: only this origin's scripts, styles, media and requests; no framing.
struct ReviewPageHeaders<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return response
    }
}

/// Why the server cannot start, for a person.
public struct ToukanServerStartupError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
