/// Entry points of the JSON Canonicalization Scheme (RFC 8785).
public enum CanonicalJSON {
    /// Parses JSON text strictly and returns its RFC 8785 canonical form.
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 encoded JSON text.
    ///   - limits: The resource limits for parsing (defaults: depth 64, 1 MiB).
    /// - Returns: The canonical UTF-8 bytes, without a trailing newline.
    /// - Throws: `JSONParseError` when the input is not strict I-JSON (see `JSONParser`).
    public static func canonicalize(
        _ bytes: some Collection<UInt8>,
        limits: JSONParser.Limits = .init()
    ) throws(JSONParseError) -> [UInt8] {
        try JSONParser(limits: limits).parse(bytes).canonicalBytes()
    }

    /// Formats a double exactly as ECMAScript's `Number.prototype.toString()` does, which is how RFC 8785
    /// serializes numbers: shortest round-trip digits, `-0` as `"0"`, plain notation for
    /// `1e-6 <= |x| < 1e21` (for example `"333333333333333300000"`, `"0.000001"`), exponent notation otherwise
    /// (`"1e+21"`, `"9.999999999999997e-7"`).
    ///
    /// - Parameter value: Any double.
    /// - Returns: The ECMAScript string; `"NaN"`, `"Infinity"` or `"-Infinity"` for non-finite values
    ///   (which canonical JSON itself never contains).
    public static func formatNumber(_ value: Double) -> String {
        NumberFormatting.ecmaScriptString(value)
    }
}
