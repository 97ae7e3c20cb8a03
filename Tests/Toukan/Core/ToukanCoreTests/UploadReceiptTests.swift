import Foundation
import Testing
import ToukanCore
import ToukanTestSupport

@Suite("POST /upload answers: the 201 receipt read strictly, error bodies, statuses as failures")
struct UploadReceiptTests {
    static let id = UUID(uuidString: "9F2A3C4D-1111-4222-8333-944455556666")!
    static let now = LedgerFixtures.epoch

    @Test("the server's receipt is the seed's JSON and reads back")
    func roundTrip() throws {
        let receipt = UploadReceipt(memoryId: Self.id)
        #expect(
            String(decoding: receipt.jsonBody, as: UTF8.self)
                == #"{"memory_id":"9f2a3c4d-1111-4222-8333-944455556666","message":"Audio uploaded and processing enqueued","status":"processing"}"#
        )
        #expect(try UploadReceipt(jsonBody: receipt.jsonBody) == receipt)
        let extra = #"{"memory_id":"9f2a3c4d-1111-4222-8333-944455556666","status":"processing","message":"ok","x":1}"#
        #expect(try UploadReceipt(jsonBody: Array(extra.utf8)).message == "ok")
    }

    @Test(
        "a 201 body that is not the receipt is a protocol violation",
        arguments: [
            "", "[]", "not json", #"{"memory_id":"m","status":"processing","message":"x"}"#,
            #"{"memory_id":"9f2a3c4d-1111-4222-8333-944455556666","status":"done","message":"x"}"#,
            #"{"memory_id":"9f2a3c4d-1111-4222-8333-944455556666","status":"processing"}"#,
            #"{"memory_id":"9f2a3c4d-1111-4222-8333-944455556666","status":"processing","message":7}"#,
            #"{"memory_id":7,"status":"processing","message":"x"}"#,
            #"{"memory_id":"9f2a3c4d-1111-4222-8333-944455556666","memory_id":"x","status":"processing","message":""}"#,
        ])
    func strict(body: String) {
        let result = UploadReceipt.interpret(status: 201, headers: [:], body: Array(body.utf8), now: Self.now)
        guard case .failure(.protocolViolation) = result else {
            Issue.record("accepted \(body): \(result)")
            return
        }
    }

    @Test("error statuses become failures with the server's message and Retry-After")
    func errors() {
        let refused = UploadErrorBody(error: "unsupported_media_type", message: "this is a WAV file")
        #expect(
            UploadReceipt.interpret(status: 415, headers: [:], body: refused.jsonBody, now: Self.now)
                == .failure(.server(status: 415, message: "this is a WAV file", retryAfter: nil)))
        #expect(
            UploadReceipt.interpret(status: 429, headers: ["retry-after": "7"], body: [], now: Self.now)
                == .failure(.server(status: 429, message: nil, retryAfter: 7)))
        #expect(
            UploadReceipt.interpret(status: 200, headers: [:], body: [], now: Self.now)
                == .failure(.protocolViolation("POST /upload answered 200, not 201")))
    }

    @Test("error bodies: JSON message, short text, nothing from HTML or binary; long ones are shortened")
    func errorBodies() {
        #expect(UploadErrorBody.message(in: Array(#"{"error":"too_large"}"#.utf8)) == "too_large")
        #expect(UploadErrorBody.message(in: Array("  upstream timed out\n".utf8)) == "upstream timed out")
        #expect(UploadErrorBody.message(in: Array("<html><body>502</body></html>".utf8)) == nil)
        #expect(UploadErrorBody.message(in: [0x00, 0xFF, 0x10]) == nil)
        #expect(UploadErrorBody.message(in: []) == nil)
        let long = UploadErrorBody.message(in: Array(String(repeating: "a", count: 1_000).utf8))
        #expect(long?.count == UploadErrorBody.maximumMessageLength)
    }
}
