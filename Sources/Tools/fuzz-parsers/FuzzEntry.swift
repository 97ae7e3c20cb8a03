import Foundation
import FuzzHarness

#if FUZZING
    import CLibFuzzer
#endif

/// The fuzz targets, and the owner of the CLibFuzzer binding: libFuzzer's C callback hands over a raw pointer, which
/// is copied into an array right here, so the harnesses themselves are safe Swift. The target is chosen by
/// `FUZZ_TARGET` (libFuzzer owns the command line): `control-channel` (default) or `upload-parsers`.
/// Built two ways (see Fuzz/run.sh):
/// - with `-sanitize=fuzzer,address -DFUZZING`: `main` hands control to libFuzzer's driver;
/// - plainly: a replayer that runs the harness over the files named on the command line (to reproduce a crash).
@main
struct FuzzParsers {
    static let targets: [String: @Sendable ([UInt8]) -> Void] = [
        "control-channel": ControlChannelFuzzer.run,
        "upload-parsers": UploadParsersFuzzer.run,
    ]

    static func main() {
        let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "control-channel"
        guard let target = targets[name] else {
            print("FUZZ_TARGET must be one of \(targets.keys.sorted().joined(separator: ", ")) (got \(name))")
            exit(2)
        }
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                    target(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                    return 0
                })
        #else
            replay(CommandLine.arguments.dropFirst(), through: target)
        #endif
    }

    static func replay(_ paths: ArraySlice<String>, through target: ([UInt8]) -> Void) {
        guard !paths.isEmpty else {
            print("usage: [FUZZ_TARGET=control-channel|upload-parsers] fuzz-parsers FILE... (replays inputs)")
            return
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                continue
            }
            target(Array(data))
            print("ok \(path) (\(data.count) bytes)")
        }
    }
}
