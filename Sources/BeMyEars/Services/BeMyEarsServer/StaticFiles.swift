import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The browser client (`Public/`: index.html, app.js, style.css), read once at start-up and served from memory
/// with explicit media types. Only files that exist in the directory are routes: no path is ever mapped onto the
/// file system, so nothing outside it can be reached.
struct StaticFiles: Sendable {
    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
    }

    /// Files by URL path (`/app.js`); `/` is `index.html`.
    let files: [String: File]

    /// Reads every regular file directly in `directory`.
    /// - Throws: ``ServerStartupError`` when the directory cannot be read or has no index.html.
    init(directory: URL) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw ServerStartupError(
                "the browser client is missing at \(directory.path) (\(error.localizedDescription)): rebuild with "
                    + "`swift build --product bemyears-server`, which copies Sources/BeMyEars/Services/BeMyEarsServer/Public"
            )
        }
        var files: [String: File] = [:]
        for name in names.sorted() where !name.hasPrefix(".") {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            let data = try Data(contentsOf: url)
            files["/" + name] = File(body: ByteBuffer(bytes: data), contentType: Self.mediaType(of: name))
        }
        guard let index = files["/index.html"] else {
            throw ServerStartupError("\(directory.path) has no index.html: the browser client is incomplete")
        }
        files["/"] = index
        self.files = files
    }

    /// The bundled client (`Public/` copied into the target's resources).
    static func bundled() throws -> StaticFiles {
        guard let resources = Bundle.module.resourceURL else {
            throw ServerStartupError("the BeMyEarsServer resource bundle is missing: rebuild bemyears-server")
        }
        return try StaticFiles(directory: resources.appendingPathComponent("Public"))
    }

    /// `Content-Type` by file extension; text types say UTF-8 so no browser has to guess.
    static func mediaType(of name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "txt": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }

    /// Adds GET and HEAD routes for every file (and an empty `/favicon.ico` when the client has none, so browsers
    /// do not log a 404 on every page load).
    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        if files["/favicon.ico"] == nil {
            router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        }
        for (path, file) in files {
            let headers: HTTPFields = [
                .contentType: file.contentType,
                .cacheControl: "no-cache",
            ]
            router.get(RouterPath(path)) { _, _ in
                Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.body))
            }
            router.head(RouterPath(path)) { _, _ in
                var headers = headers
                headers[.contentLength] = String(file.body.readableBytes)
                return Response(status: .ok, headers: headers)
            }
        }
    }
}
