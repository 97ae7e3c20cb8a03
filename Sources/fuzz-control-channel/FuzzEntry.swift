import FuzzHarness
import Foundation

// Built two ways (see Fuzz/run.sh):
// - with `-sanitize=fuzzer -DFUZZING`: a libFuzzer target; libFuzzer provides `main` and calls the entry below;
// - plainly: a replayer that runs the harness over the files named on the command line (to reproduce a crash).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    ControlChannelFuzzer.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if !FUZZING
@main
struct Replay {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            print("usage: fuzz-control-channel FILE... (replays inputs through the fuzz harness)")
            return
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                continue
            }
            data.withUnsafeBytes { ControlChannelFuzzer.run($0) }
            print("ok \(path) (\(data.count) bytes)")
        }
    }
}
#endif
