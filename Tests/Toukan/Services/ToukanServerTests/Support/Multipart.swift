import Foundation
import ToukanCore

/// `POST /upload` bodies as the recorder sends them (ToukanCore's MultipartUploadBody), whole or cut.
enum Multipart {
    static let boundary = "toukan-test-boundary-0123456789"

    static var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    static func body(_ file: [UInt8], fileName: String = "meeting.m4a") -> [UInt8] {
        let framing = try! MultipartUploadBody(boundary: boundary, fileName: fileName)
        return framing.head + file + framing.tail
    }
}
