/// A coding key for array positions and `super`, used in coding paths of `JSONValueEncoder` and
/// `JSONValueDecoder`.
struct JSONCodingKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    /// The key `super`, as `superEncoder()` and `superDecoder()` use.
    static let superKey = JSONCodingKey(stringValue: "super")
}
