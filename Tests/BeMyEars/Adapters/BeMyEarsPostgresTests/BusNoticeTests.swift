import Foundation
import Testing

@testable import BeMyEarsPostgres

/// The cluster channel's notice format, without a database.
@Suite("Bus notices")
struct BusNoticeTests {
    @Test("a notice reads back as written: canonical JSON header, then the message text byte for byte")
    func roundTrip() throws {
        let session = UUID(uuidString: "7A0F6E52-4C2B-4D57-9C41-2A8B7D1E0F33")!
        let text = #"{"type":"OFFER","sdp":"v=0\r\n…","n":1.50}"#
        let notice = BusNotice(
            source: "node-a", epoch: "e1", sequence: 42, kind: .forward, target: "node-b", session: session,
            text: text)
        let encoded = try notice.encoded()
        #expect(
            encoded.hasPrefix(
                #"{"dst":"node-b","ep":"e1","k":"f","s":"7A0F6E52-4C2B-4D57-9C41-2A8B7D1E0F33","seq":42,"src":"node-a","v":1}"#
                    + "\n"))
        #expect(BusNotice(decoding: encoded) == notice)
    }

    @Test(
        "what this version does not understand is ignored",
        arguments: [
            "", "not json", #"{"v":2,"src":"a","ep":"e","seq":1,"k":"e"}"#,
            #"{"v":1,"src":"a","ep":"e","seq":1,"k":"x"}"#,
            #"{"v":1,"src":"a","ep":"e","seq":1,"k":"f"}"#, #"{"v":1,"src":"a","ep":"e","seq":1,"k":"e","v":1}"#,
        ])
    func ignored(payload: String) {
        #expect(BusNotice(decoding: payload) == nil)
    }
}
