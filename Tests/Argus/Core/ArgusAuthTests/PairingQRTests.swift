import ArgusAuth
import Testing

@Suite("The pairing QR code's text")
struct PairingQRTests {
    @Test("written and read back; anything else is not an Argus pairing code")
    func roundTrip() throws {
        let fingerprint = String(repeating: "ab", count: 32)
        let qr = PairingQR(hub: "https://192.168.1.20:8443", fingerprint: fingerprint, code: "031337")
        #expect(qr.text == #"{"argus":1,"code":"031337","fp":"\#(fingerprint)","hub":"https://192.168.1.20:8443"}"#)
        #expect(PairingQR(scanned: qr.text) == qr)
        for text in [
            "", "not json", #"{"argus":2,"code":"031337","fp":"\#(fingerprint)","hub":"https://h:1"}"#,
            #"{"argus":1,"code":"31337","fp":"\#(fingerprint)","hub":"https://h:1"}"#,
            #"{"argus":1,"code":"031337","fp":"abc","hub":"https://h:1"}"#,
            #"{"argus":1,"code":"031337","fp":"\#(fingerprint)","hub":"http://h:1"}"#,
            String(repeating: " ", count: 600),
        ] {
            #expect(PairingQR(scanned: text) == nil, "\(text)")
        }
    }
}
