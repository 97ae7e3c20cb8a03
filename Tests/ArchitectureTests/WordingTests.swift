import Foundation
import SafetyDetection
import TestSupport
import Testing

/// Seed 003 §10.1: no medical claim anywhere a person reads — CLI output, notifications, alerts, web pages. The
/// whole of Sources/ is scanned (Swift, HTML, JavaScript, CSS, READMEs), since any of it can reach a screen; the
/// one place that names the terms, to forbid them, is left out.
@Suite("Words: nothing medical in what people read")
struct WordingTests {
    /// The seed's prohibited terms, matched as whole words.
    static let prohibited = SafetyWording.prohibitedTerms

    @Test("no prohibited term in any source file or web asset")
    func noMedicalTerms() throws {
        let sources = Fixtures.repositoryRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }
            .filter { ["swift", "html", "js", "css", "md"].contains($0.pathExtension) }
        #expect(files.count > 100, "the tree was read")
        var findings: [String] = []
        for file in files where file.lastPathComponent != "SafetyWording.swift" {
            let text = try String(contentsOf: file, encoding: .utf8).lowercased()
            for term in Self.prohibited where Self.containsWord(term, in: text) {
                findings.append("\(file.path.dropFirst(sources.path.count + 1)): \(term)")
            }
        }
        #expect(findings.isEmpty, "medical terms found: \(findings)")
    }

    @Test("the matcher finds whole words only")
    func matcher() {
        #expect(Self.containsWord("sids", in: "no sids here"))
        #expect(!Self.containsWord("sids", in: "insides"))
        #expect(Self.containsWord("heart rate", in: "a heart rate."))
    }

    static func containsWord(_ word: String, in text: String) -> Bool {
        var searchFrom = text.startIndex
        while let range = text.range(of: word, range: searchFrom..<text.endIndex) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            if !(before?.isLetter ?? false), !(after?.isLetter ?? false) { return true }
            searchFrom = range.upperBound
        }
        return false
    }
}
