import Foundation
import Testing

/// STYLE.md "Errors": a store's failure is never dropped. `try? database.revokeListener(…)` once answered UNPAIRED
/// when nothing was forgotten, and `try? database.trustedMonitors() ?? []` showed a parent an empty list on a full
/// disk. A store's error is handled where it happens: surfaced (a 503, an ERROR) or said once with context.
@Suite("Store errors are never swallowed")
struct StoreErrorTests {
    let tree = SourceTree.shared

    @Test("no `try?` on a call to a store (database, store, job queue) in any product or Platform module")
    func noSwallowedStoreErrors() {
        var checked = 0
        for module in tree.modules where !module.isTool {
            for (path, text) in module.files {
                checked += 1
                let lines = SourceTree.code(in: text).split(separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() where Self.swallowsStoreError(String(line)) {
                    Issue.record(
                        """
                        \(module)/\(path):\(number + 1): `try?` drops the store's error. Handle it where it \
                        happens: answer with it (a 503 that says what was not done, an ERROR to the peer), or say it \
                        once with what could not be done (a storeFailed event, the logger, StoreHealth on a page) and \
                        go on with what is still known.
                        """
                    )
                }
            }
        }
        #expect(checked > 100, "no source file read")
    }

    @Test("the rule finds `try?` on a store however it is written, and nothing else")
    func matcher() {
        for swallowed in [
            "let x = try? database.trustedMonitors()",
            "guard (try? database.revokeListener(id: id)) == true else {",
            "try? await store.save(x)",
            "_ = try?  self.database.recordProgress(id: id)",
            "if let a = try? db.read { $0 }",
            "try? await intake.queue.fail(job, worker: worker)",
        ] {
            #expect(Self.swallowsStoreError(swallowed), "not found in: \(swallowed)")
        }
        for fine in [
            "let x = try database.trustedMonitors()",
            "try? await Task.sleep(for: .seconds(1))",
            "try? connection.send(x)",
            "let databaseName = try? names.first",
            "try? await advertisement.update(x)",
        ] {
            #expect(!Self.swallowsStoreError(fine), "wrongly found in: \(fine)")
        }
    }

    /// `try?` (optionally `await`) right before a call on `database`, `store`, `db` or a job `queue`, also as a member
    /// (`self.database`, `intake.queue`).
    static func swallowsStoreError(_ line: String) -> Bool {
        line.contains(#/try\?\s*(await\s+)?(self\.)?([a-z]+\.)?(database|store|db|queue)\s*[.?]/#)
    }
}
