public import Foundation

/// What a pairing QR code carries: where the hub is, the certificate fingerprint to pin, and the code.
/// `{"argus":1,"hub":"https://HOST:PORT","fp":"<64 hex>","code":"123456"}` — the app scans it instead of typing.
public struct PairingQR: Sendable, Hashable, Codable {
    public var argus = 1
    public var hub: String
    public var fp: String
    public var code: String

    public init(hub: String, fingerprint: String, code: String) {
        self.hub = hub
        fp = fingerprint
        self.code = code
    }

    /// The compact JSON in the QR code.
    public var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Reads a scanned code; nil when it is not an Argus pairing code.
    public init?(scanned text: String) {
        guard text.utf8.count <= 512, let value = try? JSONDecoder().decode(PairingQR.self, from: Data(text.utf8)),
            value.argus == 1, value.fp.count == 64, value.code.count == 6, value.hub.hasPrefix("https://")
        else { return nil }
        self = value
    }
}
