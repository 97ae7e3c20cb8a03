import ArgumentParser
import CanonicalJSON
import Foundation
import Logging

/// `cribcall canonicalize`: JSON on stdin → RFC 8785 canonical bytes on stdout.
struct CanonicalizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "canonicalize",
        abstract: "Read JSON on stdin and write its RFC 8785 (JCS) canonical form to stdout.",
        discussion: """
            The output has no trailing newline. Invalid JSON (including duplicate keys, lone surrogates and \
            numbers that are not finite doubles) exits with status 2 and a one-line error on stderr.
            """
    )

    /// Inputs larger than this are refused rather than read into memory without bound.
    static let maxInputBytes = 64 << 20

    func run() throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        do {
            guard input.count <= Self.maxInputBytes else {
                throw ValidationError("input is larger than \(Self.maxInputBytes >> 20) MiB")
            }
            let parser = JSONParser(limits: .init(maxDepth: 512, maxBytes: Self.maxInputBytes))
            let value = try parser.parse(input)
            FileHandle.standardOutput.write(Data(value.canonicalBytes()))
        } catch {
            Logger(label: "cribcall canonicalize").warning("invalid JSON: \(error)")
            throw ExitCode(2)
        }
    }
}
