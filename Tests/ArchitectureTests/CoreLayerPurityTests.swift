import Foundation
import Testing
import TestSupport

/// ARCHITECTURE.md: core modules are pure — Foundation, swift-crypto, swift-certificates, NIOCore at most, and no
/// socket, file, clock or thread API — so they build on Apple platforms and are testable without I/O.
@Suite("The core layer stays pure")
struct CoreLayerPurityTests {
    static let coreModules = ["CanonicalJSON", "CPace", "DeviceIdentity", "CribCallProtocol", "SoundDetection", "BeMyEarsCore"]
    static let allowedImports = Set(["Foundation", "Crypto", "X509", "SwiftASN1", "NIOCore"] + coreModules)
    /// Uses of I/O, clocks and threads that have no place in the core.
    static let forbidden = [
        "FileManager", "FileHandle", "fopen(", "socket(", "Date()", "Date.now", "ContinuousClock.now", ".now()",
        "Thread", "DispatchQueue", "ProcessInfo", "sleep(", "Task.sleep", "NIOPosix", "getenv(",
    ]

    static func sources(of module: String) throws -> [(String, String)] {
        let root = Fixtures.repositoryRoot.appendingPathComponent("Sources/\(module)")
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var files: [(String, String)] = []
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            files.append((path, try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)))
        }
        return files
    }

    @Test("core modules import only what the core may use", arguments: coreModules)
    func imports(module: String) throws {
        let files = try Self.sources(of: module)
        #expect(!files.isEmpty)
        for (path, text) in files {
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index <= 2,
                    words.prefix(index).allSatisfy({ ["public", "internal", "package", "@preconcurrency"].contains($0) }),
                    index + 1 < words.count
                else { continue }
                let imported = String(words[index + 1])
                #expect(Self.allowedImports.contains(imported), "\(module)/\(path) imports \(imported)")
            }
        }
    }

    @Test("core modules use no file, socket, clock or thread API", arguments: coreModules)
    func noIO(module: String) throws {
        for (path, text) in try Self.sources(of: module) {
            for token in Self.forbidden {
                #expect(!text.contains(token), "\(module)/\(path) uses \(token)")
            }
        }
    }
}
