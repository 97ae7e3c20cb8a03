import Foundation
import FuzzHarness

#if FUZZING
    import CLibFuzzer
#endif

/// The control-channel fuzz target, and the owner of the CLibFuzzer binding: libFuzzer's C callback hands over a
/// raw pointer, which is copied into an array right here, so the harness itself is safe Swift.
/// Built two ways (see Fuzz/run.sh):
/// - with `-sanitize=fuzzer,address -DFUZZING`: `main` hands control to libFuzzer's driver;
/// - plainly: a replayer that runs the harness over the files named on the command line (to reproduce a crash).
@main
struct FuzzControlChannel {
    static func main() {
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                    ControlChannelFuzzer.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                    return 0
                })
        #else
            replay(CommandLine.arguments.dropFirst())
        #endif
    }

    static func replay(_ paths: ArraySlice<String>) {
        guard !paths.isEmpty else {
            print("usage: fuzz-control-channel FILE... (replays inputs through the fuzz harness)")
            return
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                continue
            }
            ControlChannelFuzzer.run(Array(data))
            print("ok \(path) (\(data.count) bytes)")
        }
    }
}
