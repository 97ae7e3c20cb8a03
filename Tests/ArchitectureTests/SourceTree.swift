import Foundation
import TestSupport

/// The layers of ARCHITECTURE.md, from the bottom up, as folder names: Sources/<area>/<layer>/<module>.
enum Layer: String, CaseIterable, Comparable, Sendable {
    case cBindings = "CBindings"
    case core = "Core"
    case adapters = "Adapters"
    case services = "Services"
    case executables = "Executables"

    static func < (a: Layer, b: Layer) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One module of Sources/, placed by its folder.
struct Module: Sendable, CustomStringConvertible {
    /// "Platform", a product ("CribCall", "BeMyEars", …) or "Tools".
    let area: String
    /// nil for Sources/Tools/<module>.
    let layer: Layer?
    let name: String
    let folder: URL
    /// Each Swift file's path below `folder` and its text.
    let files: [(path: String, text: String)]

    var isPlatform: Bool { area == "Platform" }
    var isTool: Bool { area == "Tools" }
    var description: String { "Sources/\(area)/\(layer.map { "\($0.rawValue)/" } ?? "")\(name)" }

    /// The modules its files import, with the file that imports each.
    var imports: [(module: String, file: String)] {
        files.flatMap { file in SourceTree.imports(in: file.text).map { (module: $0, file: file.path) } }
    }
}

/// Sources/ read from disk: the folders say where each module sits.
struct SourceTree: Sendable {
    let modules: [Module]
    /// Folders that are neither a layer nor a module of Tools (a misplaced module).
    let strayFolders: [String]

    static let shared: SourceTree = try! SourceTree(root: Fixtures.repositoryRoot.appendingPathComponent("Sources"))

    init(root: URL) throws {
        let fileManager = FileManager.default
        func folders(in url: URL) throws -> [String] {
            try fileManager.contentsOfDirectory(atPath: url.path).filter { name in
                var isFolder: ObjCBool = false
                return fileManager.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder)
                    && isFolder.boolValue
            }.sorted()
        }
        func module(_ area: String, _ layer: Layer?, _ folder: URL) throws -> Module {
            var files: [(String, String)] = []
            let enumerator = fileManager.enumerator(atPath: folder.path)
            while let path = enumerator?.nextObject() as? String {
                guard path.hasSuffix(".swift") else { continue }
                files.append((path, try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)))
            }
            return Module(
                area: area, layer: layer, name: folder.lastPathComponent, folder: folder,
                files: files.sorted { $0.0 < $1.0 })
        }
        var modules: [Module] = []
        var stray: [String] = []
        for area in try folders(in: root) {
            let areaURL = root.appendingPathComponent(area)
            if area == "Tools" {
                for name in try folders(in: areaURL) {
                    modules.append(try module(area, nil, areaURL.appendingPathComponent(name)))
                }
                continue
            }
            for layerName in try folders(in: areaURL) {
                guard let layer = Layer(rawValue: layerName) else {
                    stray.append("Sources/\(area)/\(layerName)")
                    continue
                }
                let layerURL = areaURL.appendingPathComponent(layerName)
                for name in try folders(in: layerURL) {
                    modules.append(try module(area, layer, layerURL.appendingPathComponent(name)))
                }
            }
        }
        self.modules = modules
        self.strayFolders = stray
    }

    subscript(name: String) -> Module? { modules.first { $0.name == name } }

    func modules(in layer: Layer) -> [Module] { modules.filter { $0.layer == layer } }

    /// The modules named by `import` declarations (`import X`, `public import X`, `@preconcurrency import X`,
    /// `import struct X.Y`, `@_implementationOnly import X`).
    static func imports(in text: String) -> [String] {
        let modifiers: Set<Substring> = [
            "public", "package", "internal", "fileprivate", "private", "@preconcurrency",
            "@_implementationOnly", "@testable", "@_exported",
        ]
        let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias", "actor"]
        var found: [String] = []
        for line in text.split(separator: "\n") {
            var words = line.split(separator: " ")[...]
            while let first = words.first, modifiers.contains(first) { words = words.dropFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            words = words.dropFirst()
            if let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
            guard let path = words.first, let name = path.split(separator: ".").first else { continue }
            found.append(String(name))
        }
        return found
    }

    /// The code of a Swift source: comments and the text of string literals removed (an interpolation's code kept),
    /// every line where it was, so line numbers still hold. String literals are left as `""`.
    static func code(in text: String) -> String {
        var scanner = CodeScanner(text)
        scanner.scanCode(inInterpolation: false)
        return String(scanner.output)
    }

    /// The identifiers in `code` (letters, digits and `_`, not starting with a digit), in order.
    static func identifiers(in code: some StringProtocol) -> [String] {
        var found: [String] = []
        var current = ""
        for character in code {
            if character.isLetter || character == "_" || (character.isNumber && !current.isEmpty) {
                current.append(character)
            } else {
                if !current.isEmpty { found.append(current) }
                current = ""
            }
        }
        if !current.isEmpty { found.append(current) }
        return found
    }
}

/// Walks Swift source text, copying code and dropping comments and string contents (Swift's lexical rules for
/// `//`, nested `/* */`, `"…"`, `"""…"""`, raw `#"…"#` and `\(…)` interpolation).
private struct CodeScanner {
    let text: [Unicode.Scalar]
    var index = 0
    var output = String.UnicodeScalarView()

    init(_ text: String) {
        self.text = Array(text.unicodeScalars)
    }

    func starts(with prefix: String, at position: Int) -> Bool {
        let scalars = Array(prefix.unicodeScalars)
        return position + scalars.count <= text.count && Array(text[position..<position + scalars.count]) == scalars
    }

    /// Copies code until the end, or (in an interpolation) until its closing parenthesis.
    mutating func scanCode(inInterpolation: Bool) {
        var depth = 0
        while index < text.count {
            let scalar = text[index]
            if starts(with: "//", at: index) {
                while index < text.count, text[index] != "\n" { index += 1 }
            } else if starts(with: "/*", at: index) {
                skipBlockComment()
            } else if scalar == "\"" || (scalar == "#" && opensRawString()) {
                scanString()
            } else if scalar == ")" && inInterpolation && depth == 0 {
                index += 1
                return
            } else {
                if scalar == "(" { depth += 1 }
                if scalar == ")" { depth -= 1 }
                output.append(scalar)
                index += 1
            }
        }
    }

    /// Whether the `#`s at `index` begin a raw string rather than `#if`, `#expect`….
    func opensRawString() -> Bool {
        var position = index
        while position < text.count, text[position] == "#" { position += 1 }
        return position < text.count && text[position] == "\""
    }

    /// Skips a `/* */` comment, nested ones included, keeping its line breaks.
    mutating func skipBlockComment() {
        var depth = 0
        while index < text.count {
            if starts(with: "/*", at: index) {
                depth += 1
                index += 2
            } else if starts(with: "*/", at: index) {
                depth -= 1
                index += 2
                if depth == 0 { return }
            } else {
                if text[index] == "\n" { output.append("\n") }
                index += 1
            }
        }
    }

    /// Skips a string literal starting at `index`, copying its interpolations' code and its line breaks.
    mutating func scanString() {
        var hashes = ""
        while text[index] == "#" {
            hashes += "#"
            index += 1
        }
        let quotes = starts(with: "\"\"\"", at: index) ? "\"\"\"" : "\""
        index += quotes.count
        output.append(contentsOf: "\"".unicodeScalars)
        let escape = "\\" + hashes
        while index < text.count {
            if starts(with: escape, at: index) {
                index += escape.unicodeScalars.count
                if index < text.count, text[index] == "(" {
                    index += 1
                    scanCode(inInterpolation: true)
                    continue
                }
            } else if starts(with: quotes + hashes, at: index) {
                index += (quotes + hashes).unicodeScalars.count
                output.append(contentsOf: "\"".unicodeScalars)
                return
            }
            if index < text.count, text[index] == "\n" { output.append("\n") }
            index += 1
        }
    }
}
