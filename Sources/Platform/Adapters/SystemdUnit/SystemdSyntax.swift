/// Quoting for systemd unit files (systemd.syntax(7) "Quoting", systemd.service(5) "Command lines",
/// systemd.unit(5) "Specifiers").
public enum SystemdSyntax {
    /// Writes one command-line word so that systemd passes exactly `word` to the program.
    ///
    /// Words made only of `A–Z a–z 0–9 _ . / : = , + @ -` (and non-ASCII letters) stay as they are. Any other word
    /// is double-quoted, with `\` → `\\`, `"` → `\"`, control characters as C escapes (`\n`, `\t`, `\x1b`); in
    /// every word `%` → `%%` (specifiers) and `$` → `$$` (environment variables). The empty word is `""`, and a
    /// lone `;` (the command separator) is `\;`.
    ///
    /// - Parameter word: One argument.
    /// - Returns: Its text on an `ExecStart=` line.
    public static func quoted(_ word: String) -> String {
        if word.isEmpty { return "\"\"" }
        if word == ";" { return "\\;" }
        if word.unicodeScalars.allSatisfy(isPlain) {
            return word
        }
        var out = "\""
        for scalar in word.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            case "$": out += "$$"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\x" + hex(scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The value of an `ExecStart=` line for `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: An absolute, normalised path without control characters or `$` (systemd does not substitute
    ///     variables in the program path, so `$` cannot be expressed there).
    ///   - arguments: The arguments, any text.
    /// - Returns: The quoted command line.
    /// - Throws: ``SystemdUnitError`` with code `invalidCommand` when the path cannot be used.
    public static func commandLine(executable: String, arguments: [String]) throws -> String {
        guard executable.hasPrefix("/") else {
            throw SystemdUnitError(.invalidCommand, "the program path \(executable) is not absolute")
        }
        let components = executable.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !executable.hasSuffix("/"), !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
        else {
            throw SystemdUnitError(.invalidCommand, "the program path \(executable) is not normalised")
        }
        guard !executable.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "$" }) else {
            throw SystemdUnitError(
                .invalidCommand,
                "the program path \(executable) contains a control character or '$', which a unit cannot express; "
                    + "move the program to another directory")
        }
        return ([executable] + arguments).map(quoted).joined(separator: " ")
    }

    /// A single-line setting value (e.g. `Description=`): specifiers escaped, control characters become spaces.
    ///
    /// - Parameter text: Any text.
    /// - Returns: The value text.
    public static func value(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": out += "%%"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        // A trailing backslash would continue the line; surrounding whitespace would be stripped.
        while out.hasSuffix("\\") { out.removeLast() }
        return out.trimmingSpaces()
    }

    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", ".", "/", ":", "=", ",", "+", "@", "-": return true
        default:
            // Letters beyond ASCII need no quoting (UTF-8 is accepted), but no whitespace or other controls.
            return scalar.value >= 0xA0 && !scalar.properties.isWhitespace
                && scalar.properties.generalCategory != .format
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(value >> 4) & 0xF], digits[Int(value) & 0xF]])
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while scalars.first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        return String(scalars)
    }
}
