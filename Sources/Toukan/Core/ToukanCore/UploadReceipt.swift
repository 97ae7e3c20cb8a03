public import CanonicalJSON
public import Foundation

/// The seed's answer to a successful `POST /upload`: `201 {"memory_id": "uuid", "status": "processing",
/// "message": "Audio uploaded and processing enqueued"}`. The server builds it with `jsonBody`, the client reads it
/// with `interpret(status:headers:body:now:)`.
public struct UploadReceipt: Sendable, Hashable {
    public static let processing = "processing"
    public static let defaultMessage = "Audio uploaded and processing enqueued"

    public let memoryId: UUID
    public let message: String

    public init(memoryId: UUID, message: String = UploadReceipt.defaultMessage) {
        self.memoryId = memoryId
        self.message = message
    }

    /// The memory id as the JSON carries it (lowercase, as the server writes it).
    public var memoryIdText: String { memoryId.uuidString.lowercased() }

    /// The 201 body, canonical JSON.
    public var jsonBody: [UInt8] {
        let value: JSONValue = [
            "memory_id": .string(memoryIdText), "status": .string(Self.processing), "message": .string(message),
        ]
        return value.canonicalBytes()
    }

    /// Reads a 201 body strictly: a JSON object whose `memory_id` is a UUID string, `status` exactly "processing"
    /// and `message` a string. Members the seed does not name are ignored, so the server may add some later.
    /// - Throws: `UploadFailure.protocolViolation` saying what was wrong.
    public init(jsonBody body: some Collection<UInt8>) throws(UploadFailure) {
        let value: JSONValue
        do {
            value = try JSONParser(limits: .init(maxDepth: 8, maxBytes: 64 * 1024)).parse(body)
        } catch {
            throw .protocolViolation("the 201 body is not JSON: \(error.message)")
        }
        guard value.objectValue != nil else { throw .protocolViolation("the 201 body is not a JSON object") }
        guard let idText = value["memory_id"]?.stringValue, let memoryId = UUID(uuidString: idText) else {
            throw .protocolViolation("the 201 body has no memory_id UUID string")
        }
        guard let status = value["status"]?.stringValue, status == Self.processing else {
            throw .protocolViolation("the 201 body's status is not \"processing\"")
        }
        guard let message = value["message"]?.stringValue else {
            throw .protocolViolation("the 201 body has no message string")
        }
        self.init(memoryId: memoryId, message: message)
    }

    /// What a `POST /upload` answer means for the queue: the receipt of a 201, or the failure to record.
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The response headers (Retry-After is read).
    ///   - body: The response body (the receipt, or the server's error message).
    ///   - now: For a Retry-After given as a date.
    public static func interpret(status: Int, headers: HeaderFields, body: [UInt8], now: Date)
        -> Result<UploadReceipt, UploadFailure>
    {
        if status == 201 {
            do throws(UploadFailure) { return .success(try UploadReceipt(jsonBody: body)) } catch {
                return .failure(error)
            }
        }
        if (200..<300).contains(status) || (100..<200).contains(status) || (300..<400).contains(status) {
            return .failure(.protocolViolation("POST /upload answered \(status), not 201"))
        }
        guard (400..<600).contains(status) else {
            return .failure(.protocolViolation("POST /upload answered an impossible status \(status)"))
        }
        let retryAfter = UploadFailure.retryAfter(headers["Retry-After"], now: now)
        return .failure(.server(status: status, message: UploadErrorBody.message(in: body), retryAfter: retryAfter))
    }
}

/// The error bodies of the Toukan server: `{"error": "unsupported_media_type", "message": "…"}`. Other servers (a
/// proxy's HTML page, plain text) are read as well as can be.
public struct UploadErrorBody: Sendable, Hashable {
    /// A short machine-readable name (`unsupported_media_type`).
    public var error: String
    /// What went wrong and what to do, for a person.
    public var message: String

    public init(error: String, message: String) {
        self.error = error
        self.message = message
    }

    public var jsonBody: [UInt8] {
        let value: JSONValue = ["error": .string(error), "message": .string(message)]
        return value.canonicalBytes()
    }

    /// The longest message kept from a body, in characters.
    public static let maximumMessageLength = 300

    /// The message of an error body: its JSON `message` (or `error`), else its text if it is short UTF-8 without
    /// markup; nil for an empty, binary or HTML body.
    public static func message(in body: [UInt8]) -> String? {
        guard !body.isEmpty, body.count <= 64 * 1024 else { return nil }
        if let value = try? JSONParser(limits: .init(maxDepth: 8, maxBytes: 64 * 1024)).parse(body) {
            return (value["message"]?.stringValue ?? value["error"]?.stringValue).map(shortened)
        }
        guard let text = String(validating: body, as: UTF8.self), !text.contains("<"),
            text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" || $0 == "\r" || $0 == "\t" })
        else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : shortened(trimmed)
    }

    private static func shortened(_ text: String) -> String {
        text.count <= maximumMessageLength ? text : String(text.prefix(maximumMessageLength - 1)) + "…"
    }
}
