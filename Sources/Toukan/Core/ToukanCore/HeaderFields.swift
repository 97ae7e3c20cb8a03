/// HTTP header fields (or a multipart part's headers) in the order they were written, looked up without regard to
/// case as RFC 9110 §5.1 requires.
public struct HeaderFields: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// Each field as written: name and value.
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The value of the first field named `name` (any case), or nil.
    public subscript(name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// How many fields are named `name` (any case): more than one of a singleton header is an error.
    public func count(of name: String) -> Int {
        fields.lazy.filter { $0.name.lowercased() == name.lowercased() }.count
    }

    /// Adds a field after the others.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field named `name` (any case) by one with `value`.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.lowercased() == name.lowercased() }
        fields.append((name: name, value: value))
    }

    public var isEmpty: Bool { fields.isEmpty }
}

extension HeaderFields {
    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy {
                $0.name.lowercased() == $1.name.lowercased() && $0.value == $1.value
            }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }
}
