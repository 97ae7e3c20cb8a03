import Foundation
import Testing

/// ARCHITECTURE.md: core modules (every Sources/*/Core/*) are pure — Foundation, swift-crypto, swift-certificates,
/// NIOCore at most, and no socket, file, clock or thread API — so they build on Apple platforms and are testable
/// without I/O.
@Suite("The core layer stays pure")
struct CoreLayerPurityTests {
    static let tree = SourceTree.shared
    static let coreModules = tree.modules(in: .core).map(\.name)
    static let allowedPackages: Set<String> = ["Foundation", "Crypto", "X509", "SwiftASN1", "NIOCore"]
    /// Uses of I/O, clocks and threads that have no place in the core.
    static let forbidden = [
        "FileManager", "FileHandle", "fopen(", "socket(", "Date()", "Date.now", "ContinuousClock.now", ".now()",
        "Thread", "DispatchQueue", "ProcessInfo", "sleep(", "Task.sleep", "NIOPosix", "getenv(",
    ]

    @Test("the core is found from the folders")
    func found() {
        // Every area with a Core folder contributes; a rename that empties the list must not pass silently.
        #expect(Self.coreModules.contains("CribCallProtocol") && Self.coreModules.contains("CanonicalJSON"))
    }

    @Test(
        "core modules import only Foundation, crypto, certificates, NIOCore and other core modules",
        arguments: coreModules)
    func imports(module name: String) throws {
        let module = try #require(Self.tree[name])
        #expect(!module.files.isEmpty)
        for (imported, file) in module.imports {
            let allowed = Self.allowedPackages.contains(imported) || Self.tree[imported]?.layer == .core
            #expect(allowed, "\(module)/\(file) imports \(imported): the core is pure; put that use in an adapter")
        }
    }

    @Test("every core module has a DocC catalog whose landing page introduces it (make docs)", arguments: coreModules)
    func documented(module name: String) throws {
        let module = try #require(Self.tree[name])
        let page = module.folder.appendingPathComponent("\(name).docc/\(name).md")
        let text = try #require(
            try? String(contentsOf: page, encoding: .utf8),
            "\(module) has no \(name).docc/\(name).md: write its landing page (see the other core modules)")
        #expect(text.hasPrefix("# ``\(name)``\n"), "\(page.path) must start with the title # ``\(name)``")
        #expect(text.contains("## Overview") && text.contains("## Topics"), "\(page.path): an Overview and Topics")
    }

    @Test("core modules use no file, socket, clock or thread API", arguments: coreModules)
    func noIO(module name: String) throws {
        let module = try #require(Self.tree[name])
        for (path, text) in module.files {
            for token in Self.forbidden {
                #expect(
                    !text.contains(token), "\(module)/\(path) uses \(token): inject it, or move that part to an adapter"
                )
            }
        }
    }
}
