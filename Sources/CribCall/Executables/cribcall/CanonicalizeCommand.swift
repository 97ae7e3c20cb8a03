import ArgumentParser
import CribCallApp
import Foundation

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

    func run() throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let bytes = try reportingFailures("canonicalize") { try Canonicalizer.canonicalize(input) }
        FileHandle.standardOutput.write(Data(bytes))
    }
}
