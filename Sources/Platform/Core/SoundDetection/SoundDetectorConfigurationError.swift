/// A rejected ``SoundDetectorConfiguration`` value: names the offending field and says which values are allowed.
///
/// The ``description`` reads like `threshold must be in 0...100 (got 101)`.
public struct SoundDetectorConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration field that was rejected, e.g. `"threshold"`.
    public var field: String
    /// A human-readable explanation that states the allowed range and the rejected value.
    public var message: String

    /// Creates an error for a field with a free-form message.
    ///
    /// - Parameters:
    ///   - field: The name of the rejected configuration field.
    ///   - message: The explanation; it should state the allowed values.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// Creates the standard "out of range" error for an integer field.
    ///
    /// - Parameters:
    ///   - field: The name of the rejected configuration field.
    ///   - value: The rejected value.
    ///   - range: The allowed closed range.
    ///   - unit: An optional unit appended to the range bounds, e.g. `"ms"`.
    /// - Returns: An error whose message reads `threshold must be in 0...100 (got 101)`.
    static func outOfRange(
        field: String,
        value: Int,
        range: ClosedRange<Int>,
        unit: String = ""
    ) -> SoundDetectorConfigurationError {
        let suffix = unit.isEmpty ? "" : " \(unit)"
        return SoundDetectorConfigurationError(
            field: field,
            message: "\(field) must be in \(range.lowerBound)...\(range.upperBound)\(suffix) (got \(value))"
        )
    }

    /// `"<message>"`; the message already starts with the field name.
    public var description: String {
        message
    }
}
