import HTTPTypes
import Hummingbird
import NIOCore
import ToukanCore

/// An HTTP answer that refuses a request: a status and a JSON body `{"error": …, "message": …}` (ToukanCore's
/// UploadErrorBody, which the recorder's queue reads), plus headers (tus answers carry theirs).
struct HTTPRefusal: Error, Sendable {
    var status: HTTPResponse.Status
    var error: String
    var message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ error: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.error = error
        self.message = message
        self.headers = headers
    }

    /// A tus rule broken: its status, message and headers.
    init(_ tus: TusServerError) {
        self.init(
            HTTPResponse.Status(code: tus.status), Self.name(of: tus.status), tus.message,
            headers: HTTPFields(tus.headers))
    }

    var response: Response {
        var headers = headers
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: UploadErrorBody(error: error, message: message).jsonBody)))
    }

    static func name(of status: Int) -> String {
        switch status {
        case 400: "bad_request"
        case 404: "not_found"
        case 409: "conflict"
        case 412: "precondition_failed"
        case 413: "payload_too_large"
        case 415: "unsupported_media_type"
        case 422: "idempotency_key_reused"
        case 460: "checksum_mismatch"
        default: "error"
        }
    }
}

extension HTTPFields {
    /// ToukanCore's header list as HTTP fields (names that are not valid tokens are skipped).
    init(_ fields: HeaderFields) {
        self.init()
        for (name, value) in fields.fields {
            if let name = HTTPField.Name(name) { self.append(HTTPField(name: name, value: value)) }
        }
    }
}

extension HeaderFields {
    /// A request's headers as ToukanCore reads them.
    init(_ fields: HTTPFields) {
        self.init(fields.map { (name: $0.name.canonicalName, value: $0.value) })
    }
}
