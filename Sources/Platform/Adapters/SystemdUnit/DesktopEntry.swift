public import Foundation

/// A desktop entry (freedesktop.org Desktop Entry Specification 1.5): a launcher in the desktop's application menu.
public struct DesktopEntry: Sendable, Hashable {
    /// The file name, e.g. `cribcall-monitor.desktop`.
    public var fileName: String
    public var name: String
    public var comment: String
    /// The program (absolute path) and its arguments.
    public var executable: String
    public var arguments: [String]
    /// An icon name from the icon theme.
    public var icon: String?
    public var categories: [String]

    public init(
        fileName: String, name: String, comment: String, executable: String, arguments: [String], icon: String? = nil,
        categories: [String] = ["Utility"]
    ) {
        self.fileName = fileName
        self.name = name
        self.comment = comment
        self.executable = executable
        self.arguments = arguments
        self.icon = icon
        self.categories = categories
    }

    /// The directory the desktop reads the user's launchers from: `$XDG_DATA_HOME/applications`, or
    /// `~/.local/share/applications`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let data: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            data = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
            data = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/share")
        }
        return data.appendingPathComponent("applications", isDirectory: true)
    }

    /// The file's text.
    /// - Throws: ``SystemdUnitError`` `invalidCommand` for a value with a line break or a relative program.
    public func rendered() throws -> String {
        guard executable.hasPrefix("/") else {
            throw SystemdUnitError(.invalidCommand, "the launcher's program must be an absolute path: \(executable)")
        }
        for value in [name, comment, executable] + arguments + categories + [icon ?? ""]
        where value.contains(where: { $0.isNewline || $0 == "\0" }) {
            throw SystemdUnitError(.invalidCommand, "a launcher's value cannot contain a line break")
        }
        var lines = [
            "[Desktop Entry]", "Type=Application", "Version=1.5", "Name=\(Self.escaped(name))",
            "Comment=\(Self.escaped(comment))",
            "Exec=" + ([executable] + arguments).map(Self.quotedArgument).joined(separator: " "),
            "Terminal=false",
        ]
        if let icon { lines.append("Icon=\(Self.escaped(icon))") }
        lines.append("Categories=" + categories.map { $0 + ";" }.joined())
        return lines.joined(separator: "\n") + "\n"
    }

    /// A string value: backslash escaped (spec: "Possible Value Types").
    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
    }

    /// One `Exec` argument: quoted when it holds a reserved character, with `"`, `` ` ``, `$` and `\` escaped inside
    /// the quotes; then, as for every string value, backslashes doubled; `%` doubled (field codes).
    static func quotedArgument(_ argument: String) -> String {
        let reserved = " \t\n\"'\\><~|&;$*?#()`"
        var text = argument.replacingOccurrences(of: "%", with: "%%")
        if text.isEmpty || text.contains(where: { reserved.contains($0) }) {
            var quoted = ""
            for character in text {
                if "\"`$\\".contains(character) { quoted.append("\\") }
                quoted.append(character)
            }
            text = "\"\(quoted)\""
        }
        return text.replacingOccurrences(of: "\\", with: "\\\\")
    }
}
