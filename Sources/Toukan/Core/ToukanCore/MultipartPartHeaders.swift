/// The headers of one part of a multipart/form-data body, with its Content-Disposition read (RFC 7578 §4.2).
public struct MultipartPartHeaders: Sendable, Hashable {
    public let fields: HeaderFields
    /// The form field's name (`file` for the seed's upload).
    public let name: String
    /// The file name the client gave, if any.
    public let fileName: String?

    public var contentType: String? { fields["Content-Type"] }

    /// Reads a part's header block (the bytes before the blank line, without it).
    /// - Throws: `.tooManyHeaders`, `.malformedHeader`.
    init(block: ArraySlice<UInt8>, maxCount: Int) throws(MultipartError) {
        var fields = HeaderFields()
        if !block.isEmpty {
            let lines = block.split(separator: 0x0A, omittingEmptySubsequences: false)
            guard lines.count <= maxCount else {
                throw MultipartError(.tooManyHeaders, "a part has more than \(maxCount) header fields")
            }
            for line in lines {
                // Every line but the last ends in CR (the LF was the separator); the block excludes the last CRLF.
                let content = line.last == 0x0D ? line.dropLast() : line
                guard line.last == 0x0D || line.endIndex == block.endIndex else {
                    throw MultipartError(.malformedHeader, "a part header line ends in a bare LF")
                }
                let (name, value) = try Self.field(content)
                fields.add(name, value)
            }
        }
        guard fields.count(of: "Content-Disposition") == 1, let disposition = fields["Content-Disposition"] else {
            throw MultipartError(.malformedHeader, "a form-data part needs exactly one Content-Disposition header")
        }
        let (type, parameters) = try Self.disposition(disposition)
        guard type == "form-data", let name = parameters["name"] else {
            throw MultipartError(
                .malformedHeader, "Content-Disposition \(disposition.debugDescription) is not form-data with a name")
        }
        self.fields = fields
        self.name = name
        self.fileName = parameters["filename"]
    }

    private static func field(_ line: ArraySlice<UInt8>) throws(MultipartError) -> (String, String) {
        let tokenBytes = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex,
            line[..<colon].allSatisfy({ tokenBytes.contains($0) }),
            line[colon...].allSatisfy({ $0 >= 0x20 || $0 == 0x09 }), line.last != 0x7F,
            let value = String(validating: line[(colon + 1)...], as: UTF8.self)
        else {
            let shown = String(decoding: line.prefix(60), as: UTF8.self)
            throw MultipartError(.malformedHeader, "part header line \(shown.debugDescription) is not `Name: value`")
        }
        return (String(decoding: line[..<colon], as: UTF8.self), value.trimmingSpaces)
    }

    /// `form-data; name="file"; filename="a.m4a"` → ("form-data", [name: file, filename: a.m4a]).
    private static func disposition(_ text: String) throws(MultipartError) -> (String, [String: String]) {
        var scalars = Substring(text).unicodeScalars[...]
        func skipSpaces() { while let c = scalars.first, c == " " || c == "\t" { scalars.removeFirst() } }
        func token(lowercased: Bool = true) -> String {
            var out = ""
            while let c = scalars.first, c != ";" && c != "=" && c != " " && c != "\t" && c != "\"" {
                out.unicodeScalars.append(c)
                scalars.removeFirst()
            }
            return lowercased ? out.lowercased() : out
        }
        let malformed = MultipartError(.malformedHeader, "Content-Disposition \(text.debugDescription) is malformed")
        skipSpaces()
        let type = token()
        var parameters: [String: String] = [:]
        skipSpaces()
        while scalars.first == ";" {
            scalars.removeFirst()
            skipSpaces()
            let key = token()
            guard !key.isEmpty, scalars.first == "=" else { throw malformed }
            scalars.removeFirst()
            var value = ""
            if scalars.first == "\"" {
                scalars.removeFirst()
                var closed = false
                while let c = scalars.popFirst() {
                    if c == "\"" {
                        closed = true
                        break
                    }
                    if c == "\\" {
                        guard let escaped = scalars.popFirst() else { throw malformed }
                        value.unicodeScalars.append(escaped)
                    } else {
                        value.unicodeScalars.append(c)
                    }
                }
                guard closed else { throw malformed }
            } else {
                value = token(lowercased: false)
                guard !value.isEmpty else { throw malformed }
            }
            guard parameters.updateValue(value, forKey: key) == nil else { throw malformed }
            skipSpaces()
        }
        guard scalars.isEmpty, !type.isEmpty else { throw malformed }
        return (type, parameters)
    }
}
