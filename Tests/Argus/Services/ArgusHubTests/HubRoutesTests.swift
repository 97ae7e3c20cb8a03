import Foundation
import TestSupport
import Testing

@testable import ArgusHub

@Suite("The hub's route table is the YAML's")
struct HubRoutesTests {
    @Test("every path and method of docs/api/mobile-api.yaml, nothing else")
    func sameAsTheSpec() throws {
        let yaml = try String(
            contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/api/mobile-api.yaml"), encoding: .utf8)
        var inPaths = false
        var current: String?
        var spec: [String: [String]] = [:]
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") {
                inPaths = true
                continue
            }
            if inPaths, let first = line.first, first != " ", first != "#" { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                current = String(line.dropFirst(2).dropLast())
                spec[current!] = []
            } else if let current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "delete", "patch", "head", "options"].contains(key) {
                    spec[current, default: []].append(key.uppercased())
                }
            }
        }
        let table = Dictionary(
            uniqueKeysWithValues: HubRoutes.table.map {
                ("/" + $0.template.joined(separator: "/"), $0.methods)
            })
        #expect(spec == table)
        #expect(HubRoutes.methods(for: "/api/v1/mobile/events/recent") == ["GET"])
        #expect(HubRoutes.methods(for: "/api/v1/mobile/events/abc/thumbnail") == ["GET"])
        #expect(HubRoutes.methods(for: "/api/v1/mobile/push/unregister?x=1") == ["DELETE"])
        #expect(HubRoutes.methods(for: "/nowhere").isEmpty)
    }
}
