import HTTPTypes
public import Hummingbird

/// The browser security headers of a local web app, on every response (``SecretGate`` adds them, refusals and
/// unknown paths included).
///
/// The Content-Security-Policy allows nothing but this origin (pictures also from `data:`/`blob:` URLs the page
/// makes itself; media from `blob:` for live streams); no inline script; no framing; no referrer leaves the page.
public enum SecurityHeaders {
    public static var contentSecurityPolicy: String {
        "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; object-src 'none'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// Sets the headers on `response`.
    public static func apply(to response: inout Response) {
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
    }
}
