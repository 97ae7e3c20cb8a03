import Foundation
import TestSupport
import Testing

/// ARCHITECTURE.md's dependency rule, checked from the folders: Sources/<area>/<layer>/<module>.
@Suite("The folders are the architecture")
struct LayerRuleTests {
    let tree = SourceTree.shared

    @Test("every module sits in a known layer of an area, or in Tools")
    func placement() {
        #expect(tree.strayFolders.isEmpty, "not a layer (\(Layer.allCases.map(\.rawValue))): \(tree.strayFolders)")
        for layer in [Layer.core, .adapters, .services] {
            #expect(!tree.modules(in: layer).isEmpty, "no module found in any \(layer.rawValue) folder")
        }
        let names = tree.modules.map(\.name)
        #expect(Set(names).count == names.count, "two folders hold a module of the same name: \(names)")
    }

    @Test(
        "imports point downward: a module uses lower layers, and its own layer only where ARCHITECTURE.md declares it")
    func downward() throws {
        let declared = try Self.declaredSameLayerImports()
        var used: [String: Set<String>] = [:]
        for module in tree.modules {
            guard let layer = module.layer else { continue }
            for (imported, file) in module.imports {
                guard let target = tree[imported] else { continue }  // a system or package module
                #expect(
                    !target.isTool, "\(module)/\(file) imports \(imported): Tools are not part of any product")
                guard let targetLayer = target.layer, target.name != module.name else { continue }
                #expect(
                    targetLayer <= layer,
                    "\(module)/\(file) imports \(target): \(layer.rawValue) may use only lower layers; move the shared part down a layer"
                )
                guard targetLayer == layer else { continue }
                used[module.name, default: []].insert(target.name)
                let area = target.area == module.area || target.isPlatform || Self.usesProduct(module, target)
                #expect(
                    area && declared[module.name]?.contains(target.name) == true,
                    """
                    \(module)/\(file) imports \(target) of its own layer: declare it (and why) in ARCHITECTURE.md's \
                    "Imports within a layer", or move the shared part down a layer
                    """
                )
            }
        }
        for (module, targets) in declared {
            let stale = targets.subtracting(used[module] ?? [])
            #expect(
                stale.isEmpty,
                "ARCHITECTURE.md declares that \(module) uses \(stale.sorted()), which it no longer imports: remove the row"
            )
        }
    }

    /// ARCHITECTURE.md's "Imports within a layer" table: module → the modules of its own layer it may use.
    static func declaredSameLayerImports() throws -> [String: Set<String>] {
        let text = try String(
            contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(
            text.components(separatedBy: "### Imports within a layer").dropFirst().first,
            "docs/ARCHITECTURE.md has no \"### Imports within a layer\" section")
        var declared: [String: Set<String>] = [:]
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("#") && !$0.hasPrefix("Rules") }) {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard line.hasPrefix("|"), cells.count >= 3, Layer(rawValue: cells[0]) != nil else { continue }
            let uses = cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            declared[cells[1], default: []].formUnion(uses)
        }
        #expect(!declared.isEmpty, "ARCHITECTURE.md's \"Imports within a layer\" table has no rows")
        return declared
    }

    @Test("executables import only services: they parse arguments and call a service that composes the rest")
    func executablesUseServices() {
        let executables = tree.modules(in: .executables)
        #expect(executables.contains { $0.name == "cribcall" }, "no executable found in any Executables folder")
        for module in executables {
            for (imported, file) in module.imports {
                guard let target = tree[imported] else { continue }  // a package: ArgumentParser, Logging, …
                #expect(
                    target.layer == .services,
                    """
                    \(module)/\(file) imports \(target): an executable holds no logic and only calls services; \
                    compose \(target.name) in a service of \(module.area) (as CribCall/Services/CribCallApp does) \
                    and call that
                    """
                )
            }
        }
    }

    @Test("Platform uses no product; a product uses Platform and itself only")
    func areas() {
        for module in tree.modules where !module.isTool {
            for (imported, file) in module.imports {
                guard let target = tree[imported], !target.isTool else { continue }
                if module.isPlatform {
                    #expect(
                        target.isPlatform,
                        "\(module)/\(file) imports \(target): the Platform is shared and knows no product; move the product-specific part into \(target.area)"
                    )
                } else {
                    #expect(
                        target.isPlatform || target.area == module.area || Self.usesProduct(module, target),
                        """
                        \(module)/\(file) imports \(target): products are independent (the declared exceptions: \
                        \(Self.buildsOn)); move what both need into Platform
                        """
                    )
                }
            }
        }
    }

    /// The products that build on another product, and which. Argus's hub is a CribCall listener (it pairs with
    /// monitors and turns their alerts into camera events), so its services compose CribCall's, the way every
    /// product's services compose Platform's; nothing below Argus's services may use CribCall, and CribCall knows
    /// nothing of Argus.
    static let buildsOn: [String: Set<String>] = ["Argus": ["CribCall"]]

    /// Whether `module` may use `target` of another product: only from its services, and only a declared one.
    static func usesProduct(_ module: Module, _ target: Module) -> Bool {
        module.layer == .services && buildsOn[module.area]?.contains(target.area) == true
    }

    @Test("a product builds on another only as declared, from its services, and never in a circle")
    func productsBuiltOn() {
        for (product, used) in Self.buildsOn {
            #expect(products.contains(product))
            for other in used {
                #expect(products.contains(other) && other != product)
                #expect(Self.buildsOn[other]?.contains(product) != true, "\(product) and \(other) build on each other")
            }
        }
        for module in tree.modules where !module.isTool && !module.isPlatform {
            for (imported, file) in module.imports {
                guard let target = tree[imported], !target.isTool, !target.isPlatform, target.area != module.area
                else { continue }
                #expect(
                    Self.usesProduct(module, target),
                    "\(module)/\(file) imports \(target) of another product; only declared services may")
            }
        }
    }

    /// Every product, present or planned (an area of Sources/ other than Platform and Tools counts too).
    var products: [String] {
        let areas = tree.modules.map(\.area).filter { $0 != "Platform" && $0 != "Tools" }
        return Array(Set(["CribCall", "BeMyEars", "Toukan", "Argus", "CribAlert"] + areas)).sorted()
    }

    @Test("Platform code names no product: no identifier of a Platform module contains a product's name")
    func platformNamesNoProduct() {
        #expect(products.contains("CribCall") && products.contains("BeMyEars"))
        for module in tree.modules where module.isPlatform {
            for (path, text) in module.files {
                let lines = SourceTree.code(in: text).split(separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() {
                    for identifier in SourceTree.identifiers(in: line) {
                        for product in products where identifier.lowercased().contains(product.lowercased()) {
                            Issue.record(
                                """
                                \(module)/\(path):\(number + 1): `\(identifier)` names \(product). The Platform is shared \
                                by every product and knows none: keep this module generic and move what is \(product)'s \
                                into Sources/\(product)/ (e.g. an adapter over this one, as CribCall/Adapters/\
                                CribCallDiscovery over ServiceDiscovery), or give it a name that fits every product.
                                """
                            )
                        }
                    }
                }
            }
        }
    }

    @Test("the code reader skips comments and string text, and keeps interpolated code and line numbers")
    func codeReader() {
        let text = ##"""
            // CribCall in a comment
            /// BeMyEars in a doc comment
            /* Toukan /* nested */ Argus
               still a comment */ #if DEBUG
            let name = "CribCall \(cribCallName) \"quoted CribAlert\" \\"
            let raw = #"Argus \(notCode) \#(rawCode) "quoted" "#
            let block = """
                Toukan "inside" \(blockCode(of: "BeMyEars"))
                """
            #endif
            """##
        let code = SourceTree.code(in: text)
        #expect(code.filter { $0 == "\n" }.count == text.filter { $0 == "\n" }.count)
        #expect(
            SourceTree.identifiers(in: code) == [
                "if", "DEBUG", "let", "name", "cribCallName", "let", "raw", "rawCode", "let", "block", "blockCode",
                "of", "endif",
            ])
    }

    @Test("C bindings are only C: no Swift sources in a CBindings folder")
    func cBindings() {
        for module in tree.modules(in: .cBindings) {
            #expect(
                module.files.isEmpty,
                "\(module) holds Swift files \(module.files.map(\.path)); Swift belongs in its adapter")
        }
        #expect(!tree.modules(in: .cBindings).isEmpty)
    }

    @Test("each C library has exactly one owner: a single adapter imports its binding")
    func cLibraryOwners() {
        for binding in tree.modules(in: .cBindings) {
            let importers = tree.modules.filter { module in
                !module.isTool && module.imports.contains { $0.module == binding.name }
            }
            #expect(
                importers.count <= 1,
                """
                \(binding.name) is imported by \(importers.map(\.description)): one adapter owns a C library; give \
                the others a Swift API in \(importers.first?.name ?? "it") instead
                """
            )
            for importer in importers {
                #expect(
                    importer.layer == .adapters,
                    "\(importer) imports the C binding \(binding.name): only an adapter may own a C library"
                )
            }
        }
    }

    @Test("unsafe pointers stay in adapters, where the C libraries are owned")
    func unsafeCode() {
        let tokens = ["Unsafe", "Unmanaged", "unsafeBitCast"]
        for module in tree.modules where !module.isTool && module.layer != .adapters {
            for (path, text) in module.files {
                for token in tokens where text.contains(token) {
                    Issue.record(
                        """
                        \(module)/\(path) uses \(token): unsafe code belongs to the adapter that owns the C library; \
                        give that adapter a safe Swift API and call it
                        """
                    )
                }
            }
        }
    }

    @Test("the import scanner reads every form of import")
    func scanner() {
        let text = """
            import Foundation
            public import CribCallProtocol
            @preconcurrency import CGStreamer
            import struct NIOCore.ByteBuffer
            package import Synchronization
            // import NotThis
            let notAnImport = "import Nope"
            """
        #expect(
            SourceTree.imports(in: text) == [
                "Foundation", "CribCallProtocol", "CGStreamer", "NIOCore", "Synchronization",
            ])
    }
}
