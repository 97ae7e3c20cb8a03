/// tus 1.0 (https://tus.io/protocols/resumable-upload) as both sides of the core speak it: the names, and the
/// requests and responses the client machine exchanges with a server (the adapters carry them over HTTP).
public enum Tus {
    public static let version = "1.0.0"
    /// The extensions the Toukan server offers.
    public static let extensions = ["creation", "checksum", "termination"]
    public static let checksumAlgorithms = ["sha1"]
    /// The Content-Type of every PATCH.
    public static let patchContentType = "application/offset+octet-stream"
    /// The status of a checksum mismatch (checksum extension).
    public static let checksumMismatch = 460
    /// The header with which the Toukan server gives the memory of a completed upload (final PATCH, HEAD).
    public static let memoryIdHeader = "Memory-Id"
    /// The header that carries the idempotency key on creation (also in the metadata as `idempotency-key`).
    public static let idempotencyKeyHeader = "Idempotency-Key"
}

/// An HTTP method tus uses.
public enum TusMethod: String, Sendable, Hashable {
    case post = "POST"
    case head = "HEAD"
    case patch = "PATCH"
    case delete = "DELETE"
    case options = "OPTIONS"
}

/// A request to perform: method, target (the creation endpoint or the upload's Location, as the server gave it),
/// headers and body (a chunk of the file for PATCH, empty otherwise).
public struct TusRequest: Sendable, Hashable {
    public var method: TusMethod
    public var target: String
    public var headers: HeaderFields
    public var body: [UInt8]

    public init(method: TusMethod, target: String, headers: HeaderFields, body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }
}

/// A response received: status, headers, body (only error responses have one).
public struct TusResponse: Sendable, Hashable {
    public var status: Int
    public var headers: HeaderFields
    public var body: [UInt8]

    public init(status: Int, headers: HeaderFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A refusal by the tus server: the HTTP status it answers with (in tus the status is the protocol's error code),
/// the headers that go with it, and a message for the client's developer.
public struct TusServerError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    public var message: String
    public var headers: HeaderFields

    public init(status: Int, _ message: String, headers: HeaderFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status): \(message)" }
}

extension HeaderFields {
    /// A header that must appear once and hold a non-negative decimal integer (`Upload-Length`, `Upload-Offset`).
    /// - Returns: nil when absent.
    /// - Throws: `TusServerError` 400 when repeated, empty, signed, or beyond 18 digits.
    func tusInteger(_ name: String) throws(TusServerError) -> Int64? {
        guard count(of: name) <= 1 else { throw TusServerError(status: 400, "\(name) appears more than once") }
        guard let text = self[name] else { return nil }
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = Int64(text)
        else { throw TusServerError(status: 400, "\(name) \(text.debugDescription) is not a non-negative integer") }
        return value
    }
}
