public import Foundation

/// The `Upload-Metadata` header: comma-separated `key base64value` pairs (a key may have no value). Parsing is
/// bounded: at most `maximumHeaderBytes` of header and `maximumPairs` pairs, keys unique, values strict base64.
public struct TusMetadata: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: [UInt8]?
    }

    public static let maximumHeaderBytes = 4_096
    public static let maximumPairs = 32

    public private(set) var entries: [Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    /// The client's metadata for a recording: its file name and type, and the idempotency key.
    public init(fileName: String, fileType: String, idempotencyKey: IdempotencyKey) {
        self.init([
            Entry(key: "filename", value: Array(fileName.utf8)), Entry(key: "filetype", value: Array(fileType.utf8)),
            Entry(key: "idempotency-key", value: Array(idempotencyKey.rawValue.utf8)),
        ])
    }

    /// The raw value of `key`; `.some(nil)` for a key given without a value, nil when absent.
    public subscript(key: String) -> [UInt8]?? {
        entries.first { $0.key == key }.map(\.value)
    }

    /// The value of `key` as UTF-8 text, nil when absent, empty or not UTF-8.
    public func string(_ key: String) -> String? {
        guard case .some(.some(let bytes)) = self[key] else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The header value.
    public var headerValue: String {
        entries.map { entry in
            entry.value.map { "\(entry.key) \(Data($0).base64EncodedString())" } ?? entry.key
        }.joined(separator: ",")
    }

    /// Reads a header value.
    /// - Throws: `TusServerError` 400 saying what is wrong.
    public init(parsing header: String) throws(TusServerError) {
        guard header.utf8.count <= Self.maximumHeaderBytes else {
            throw TusServerError(status: 400, "Upload-Metadata is longer than \(Self.maximumHeaderBytes) bytes")
        }
        var entries: [Entry] = []
        guard !header.trimmingSpaces.isEmpty else {
            self.init()
            return
        }
        let pairs = header.split(separator: ",", omittingEmptySubsequences: false)
        guard pairs.count <= Self.maximumPairs else {
            throw TusServerError(status: 400, "Upload-Metadata has more than \(Self.maximumPairs) pairs")
        }
        let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
        for pair in pairs {
            let parts = pair.trimmingSpaces.split(separator: " ", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let key = parts.first, !key.isEmpty,
                key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2C })
            else {
                throw TusServerError(status: 400, "Upload-Metadata pair \(String(pair).debugDescription) is malformed")
            }
            guard !entries.contains(where: { $0.key == key }) else {
                throw TusServerError(status: 400, "Upload-Metadata has the key \(String(key).debugDescription) twice")
            }
            var value: [UInt8]?
            if parts.count == 2 {
                guard parts[1].utf8.allSatisfy({ base64.contains($0) }),
                    let data = Data(base64Encoded: String(parts[1]))
                else {
                    throw TusServerError(
                        status: 400, "Upload-Metadata value of \(String(key).debugDescription) is not base64")
                }
                value = Array(data)
            }
            entries.append(Entry(key: String(key), value: value))
        }
        self.init(entries)
    }
}
