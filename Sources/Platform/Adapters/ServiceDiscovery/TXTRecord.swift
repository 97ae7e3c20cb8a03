/// The TXT record of a DNS-SD service (RFC 6763 §6): key/value entries in order, encoded and parsed without the C
/// library.
///
/// Wire format: a sequence of strings, each one length byte then `key=value` (or a bare `key`, a boolean attribute);
/// at most 255 bytes per string. Keys compare case-insensitively and only the first occurrence of a key counts
/// (§6.4). What a product's keys mean is the product's business: this type only carries them.
public struct TXTRecord: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// One string of the record.
    public struct Entry: Sendable, Hashable {
        /// The key, as sent.
        public var key: String
        /// The value after `=`; nil for a boolean attribute (a key without `=`).
        public var value: String?

        /// Creates an entry.
        public init(key: String, value: String?) {
            self.key = key
            self.value = value
        }
    }

    /// The largest record ``init(parsing:)`` accepts: what fits in one mDNS packet (RFC 6762 §17); real ones are a
    /// few hundred bytes.
    public static let maximumLength = 8_900

    /// The entries in their advertised order.
    public var entries: [Entry]

    /// Creates a record of `key=value` entries in this order.
    public init(_ entries: [(key: String, value: String)] = []) {
        self.entries = entries.map { Entry(key: $0.key, value: $0.value) }
    }

    /// Creates a record of `key=value` entries in the order written.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The value of the first entry whose key matches `key` case-insensitively; nil when there is none or it is a
    /// boolean attribute.
    public subscript(key: String) -> String? {
        let wanted = key.lowercased()
        return entries.first { $0.key.lowercased() == wanted }?.value
    }

    /// The wire bytes.
    ///
    /// - Throws: ``ServiceDiscoveryError/Code/invalidAdvertisement`` when an entry exceeds 255 bytes.
    public func encoded() throws(ServiceDiscoveryError) -> [UInt8] {
        var bytes: [UInt8] = []
        for entry in entries {
            let text = Array((entry.value.map { "\(entry.key)=\($0)" } ?? entry.key).utf8)
            guard text.count <= 255 else {
                throw ServiceDiscoveryError(
                    code: .invalidAdvertisement,
                    message: "the TXT entry \(entry.key) is \(text.count) bytes; DNS-SD allows 255: shorten it"
                )
            }
            bytes.append(UInt8(text.count))
            bytes.append(contentsOf: text)
        }
        return bytes
    }

    /// Parses TXT wire bytes. Empty strings (such as the single zero byte of an empty record) are skipped.
    ///
    /// - Returns: nil when the record is longer than ``maximumLength``, a length runs past the end, or an entry is
    ///   not UTF-8.
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count <= Self.maximumLength else { return nil }
        var entries: [Entry] = []
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            index += 1
            guard index + length <= bytes.count else { return nil }
            let text = bytes[index..<index + length]
            index += length
            guard !text.isEmpty else { continue }
            guard let equals = text.firstIndex(of: UInt8(ascii: "=")) else {
                guard let key = String(validating: text, as: UTF8.self) else { return nil }
                entries.append(Entry(key: key, value: nil))
                continue
            }
            guard let key = String(validating: text[text.startIndex..<equals], as: UTF8.self),
                let value = String(validating: text[(equals + 1)...], as: UTF8.self)
            else { return nil }
            entries.append(Entry(key: key, value: value))
        }
        self.entries = entries
    }
}
