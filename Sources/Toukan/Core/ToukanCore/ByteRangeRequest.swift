/// A `Range: bytes=…` request header against a file of known size (RFC 9110 §14.1.2), as the review page's audio
/// player sends it to seek. One range is served; anything else is answered with the whole file, which RFC 9110
/// allows (a server may ignore `Range`).
public enum ByteRangeRequest: Sendable, Hashable {
    /// No `Range` header, several ranges, or one that cannot be parsed: answer 200 with the whole file.
    case whole
    /// Answer 206 with these bytes (never empty, within the file) and `Content-Range: bytes first-last/size`.
    case partial(ClosedRange<Int64>)
    /// The range starts past the end of the file (or asks for the last 0 bytes): answer 416 with
    /// `Content-Range: bytes */size`.
    case unsatisfiable

    /// The longest header value read; longer ones are treated as absent.
    static let maximumHeaderLength = 200

    /// Reads `header` (the `Range` value, nil if absent) for a file of `size` bytes.
    public init(header: String?, size: Int64) {
        guard let header, header.utf8.count <= Self.maximumHeaderLength else {
            self = .whole
            return
        }
        let trimmed = header.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = trimmed.dropFirst("bytes=".count).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let firstText = spec[..<dash].trimmingSpaces
        let lastText = spec[spec.index(after: dash)...].trimmingSpaces
        switch (Self.number(firstText), Self.number(lastText)) {
        case (nil, let suffix?) where firstText.isEmpty:
            // The last `suffix` bytes.
            guard suffix > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(Swift.max(0, size - suffix)...(size - 1))
        case (let first?, nil) where lastText.isEmpty:
            self = first < size ? .partial(first...(size - 1)) : .unsatisfiable
        case (let first?, let last?) where first <= last:
            self = first < size ? .partial(first...min(last, size - 1)) : .unsatisfiable
        default:
            self = .whole
        }
    }

    /// `Content-Range` for this answer: `bytes first-last/size`, `bytes */size` for 416, nil for the whole file.
    public func contentRange(size: Int64) -> String? {
        switch self {
        case .whole: nil
        case .partial(let range): "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
        case .unsatisfiable: "bytes */\(size)"
        }
    }

    /// A decimal without sign, at most 18 digits (so it fits an Int64).
    private static func number(_ text: String) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
