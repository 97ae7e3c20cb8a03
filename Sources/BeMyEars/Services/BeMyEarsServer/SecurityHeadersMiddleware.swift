import HTTPTypes
import Hummingbird

/// Adds the browser security headers to every HTTP response.
///
/// The Content-Security-Policy allows nothing but this origin: the client has no inline script or style (it sets
/// styles through CSSOM, which CSP does not restrict), loads nothing from elsewhere, and connects only to its own
/// `/ws` (CSP level 3 `'self'` covers `ws:`/`wss:` of the same host and port). Camera and microphone stay
/// available to this origin only.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var contentSecurityPolicy: String {
        "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("Permissions-Policy")!] = "camera=(self), microphone=(self)"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        return response
    }
}
