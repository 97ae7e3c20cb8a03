public import Foundation
import HTTPTypes
public import Hummingbird
import NIOCore

/// A web app's files (HTML, JavaScript, CSS, pictures), read once at start-up and served from memory with explicit
/// media types. Only files that exist directly in the directory are routes: no request path is ever mapped onto
/// the file system, so nothing outside it can be reached.
public struct StaticAssets: Sendable {
    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
    }

    /// Files by URL path (`/app.js`); `/` is `index.html`.
    let files: [String: File]

    /// The URL paths served, sorted (`/` included).
    public var paths: [String] { files.keys.sorted() }

    /// Reads every regular file directly in `directory`.
    /// - Throws: ``LocalWebAppError`` when the directory cannot be read or has no index.html.
    public init(directory: URL) throws(LocalWebAppError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw LocalWebAppError("the web app's files are missing at \(directory.path): rebuild the program")
        }
        var files: [String: File] = [:]
        for name in names.sorted() where !name.hasPrefix(".") {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = try? Data(contentsOf: url)
            else { continue }
            files["/" + name] = File(body: ByteBuffer(bytes: data), contentType: Self.mediaType(of: name))
        }
        guard let index = files["/index.html"] else {
            throw LocalWebAppError(
                "\(directory.path) has no index.html: the web app is incomplete; rebuild the program")
        }
        files["/"] = index
        self.files = files
    }

    /// `Content-Type` by file extension; text types say UTF-8 so no browser has to guess.
    public static func mediaType(of name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "wav": "audio/wav"
        case "txt": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }

    /// GET and HEAD routes for every file (and an empty `/favicon.ico` when there is none, so browsers do not log a
    /// 404 on every page load).
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        if files["/favicon.ico"] == nil {
            router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        }
        for (path, file) in files {
            let headers: HTTPFields = [.contentType: file.contentType, .cacheControl: "no-cache"]
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

/// Why a local web app cannot start, in a sentence that says what to do.
public struct LocalWebAppError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
