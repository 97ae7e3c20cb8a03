// A recorder in a process of its own, for the tests that kill it (and for measuring its CPU use).
//
//   toukan-record-probe SOURCE OUTPUT [--seconds N]   record SOURCE (an --audio-source value) into OUTPUT, until
//                                                      N seconds of audio are recorded, or forever
//   toukan-record-probe --recover PARTIAL OUTPUT      finalise a partial recording
//
// One JSON object per line on stdout: {"event":"started"}, {"event":"elapsed","seconds":…} ten times a second,
// {"event":"paused"|"resumed",…}, then {"event":"finished","seconds":…,"cpu_seconds":…,"wall_seconds":…,
// "bytes":…} or {"event":"recovered","seconds":…}; {"event":"error","message":…} and status 1 on failure.

import Foundation
import ToukanCore
import ToukanRecorder

#if canImport(Glibc)
    import Glibc
#endif

func emit(_ fields: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

func fail(_ message: String) -> Never {
    emit(["event": "error", "message": message])
    exit(1)
}

func seconds(_ duration: Duration) -> Double {
    duration / .seconds(1)
}

/// User plus system CPU time of this process so far, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

func record(source text: String, output: URL, seconds limit: Double?) async {
    do {
        let source = try RecordingSource(parsing: text)
        let recorder = try ToukanRecorder(source: source, output: output)
        let events = recorder.events()
        Task {
            for await event in events {
                switch event {
                case .started: emit(["event": "started", "file": output.path])
                case .paused(let at, let reason):
                    emit(["event": "paused", "at": seconds(at), "reason": reason])
                case .resumed(let gap):
                    emit(["event": "resumed", "at": gap.start, "length": gap.length])
                case .failed(let error): emit(["event": "failed", "message": error.message])
                case .finished: break
                }
            }
        }
        let cpuAtStart = cpuSeconds()
        let wallAtStart = ContinuousClock.now
        try await recorder.start()
        while limit.map({ seconds(recorder.elapsed) < $0 }) ?? true {
            emit(["event": "elapsed", "seconds": seconds(recorder.elapsed)])
            try await Task.sleep(for: .milliseconds(100))
        }
        let summary = try await recorder.stop()
        let bytes = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
        emit([
            "event": "finished", "seconds": seconds(summary.duration), "cpu_seconds": cpuSeconds() - cpuAtStart,
            "wall_seconds": seconds(.now - wallAtStart), "bytes": bytes,
        ])
    } catch let error as RecorderError {
        fail(error.message)
    } catch {
        fail("\(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.count == 3, arguments[0] == "--recover" {
    do {
        let duration = try await ToukanRecorder.recover(
            URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
        emit(["event": "recovered", "seconds": seconds(duration)])
    } catch {
        fail(error.message)
    }
} else if arguments.count == 2 || (arguments.count == 4 && arguments[2] == "--seconds") {
    let limit = arguments.count == 4 ? Double(arguments[3]) : nil
    await record(source: arguments[0], output: URL(fileURLWithPath: arguments[1]), seconds: limit)
} else {
    fail("usage: toukan-record-probe SOURCE OUTPUT [--seconds N] | --recover PARTIAL OUTPUT")
}
