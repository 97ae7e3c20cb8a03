// CribCall live-stream benchmark (release build; run from the repository root, as root for the namespace part):
//   swift build -c release --product stream-benchmark && .build/release/stream-benchmark
// Real QUIC, webrtcbin (Opus, VP8/H.264, DTLS-SRTP, host ICE), the monitor's sender fed by a shared microphone:
// - START_STREAM_REQUEST → first decoded audio buffer at the listener (p50/p95 over 20 streams, one process);
// - mouth-to-ear: a click injected into the monitor's microphone feed → heard at the listener, i.e. when its
//   decoded buffer is due at the speaker (jitter buffer and pipeline latency included; the sound card's own
//   output buffer not): monitor and listener as two processes, on loopback and across two network namespaces
//   with 20 ms of one-way delay each way (p50/p95, audio-only and during audio+video);
// - CPU of the monitor process and of the listener process while streaming audio, and audio+video.
import BenchmarkSupport
import Foundation

// The roles are stopped with SIGTERM, which a parent's Process may have passed on blocked.
var termination = sigset_t()
sigemptyset(&termination)
sigaddset(&termination, SIGTERM)
sigaddset(&termination, SIGINT)
pthread_sigmask(SIG_UNBLOCK, &termination, nil)

let roleArguments = Array(CommandLine.arguments.dropFirst())
switch roleArguments.first {
case "monitor-role":
    do { try await runMonitorRole(RoleArguments(Array(roleArguments.dropFirst()))) } catch {
        failBenchmark("the monitor role failed: \(error)")
    }
case "listener-role":
    do { try await runListenerRole(RoleArguments(Array(roleArguments.dropFirst()))) } catch {
        failBenchmark("the listener role failed: \(error)")
    }
default: break
}

func report(_ label: String, _ run: MouthToEar) {
    func line(_ name: String, _ values: [Double]) -> String {
        String(
            format: "%@: p50 %.0f ms, p95 %.0f ms (%d clicks)", name, percentile(values, 0.5),
            percentile(values, 0.95), values.count)
    }
    say("Mouth-to-ear, \(label): " + line("audio", run.audio) + "; " + line("during audio+video", run.audioVideo))
    if run.audio.count < run.clicksDuringAudio * 3 / 4 {
        say("  warning: only \(run.audio.count) of ~\(run.clicksDuringAudio) clicks were heard")
    }
    func cpu(_ values: [String: Double], _ type: String) -> String {
        values[type].map { String(format: "%.1f %%", $0) } ?? "n/a"
    }
    say(
        "CPU, \(label) (of one core): monitor \(cpu(run.monitorCPU, "audio")) audio, "
            + "\(cpu(run.monitorCPU, "audio_video")) audio+video; listener \(cpu(run.listenerCPU, "audio")) audio, "
            + "\(cpu(run.listenerCPU, "audio_video")) audio+video")
    let json: [String: Any] = [
        "event": "benchmark", "name": "mouth-to-ear", "link": label,
        "audioP50Ms": percentile(run.audio, 0.5), "audioP95Ms": percentile(run.audio, 0.95),
        "audioVideoP50Ms": percentile(run.audioVideo, 0.5), "audioVideoP95Ms": percentile(run.audioVideo, 0.95),
        "monitorCPUPercent": run.monitorCPU, "listenerCPUPercent": run.listenerCPU,
    ]
    if let data = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]) {
        say(String(decoding: data, as: UTF8.self))
    }
}

let start = await benchmarkStep("stream start latency") { try await measureStartLatency() }
say(
    String(
        format: "START_STREAM_REQUEST → first decoded audio (20 streams, loopback): p50 %.0f ms, p95 %.0f ms",
        start.p50, start.p95))
say(String(format: #"{"event":"benchmark","name":"stream-start","p50Ms":%.1f,"p95Ms":%.1f}"#, start.p50, start.p95))

report(
    "loopback",
    await benchmarkStep("mouth-to-ear on loopback") {
        try await runRoles(monitorHost: "127.0.0.1", listenerHost: "127.0.0.1")
    })

if let lan = DelayedLAN.make(delayMilliseconds: 20) {
    do {
        try await lan.ready()
        let run = try await runRoles(
            monitorHost: DelayedLAN.addresses.0, listenerHost: DelayedLAN.addresses.1,
            monitorWrap: ["/usr/sbin/ip", "netns", "exec", DelayedLAN.namespaces.0],
            listenerWrap: ["/usr/sbin/ip", "netns", "exec", DelayedLAN.namespaces.1]
        )
        lan.tearDown()
        report("two namespaces, 20 ms each way", run)
    } catch {
        lan.tearDown()
        failBenchmark("mouth-to-ear across two namespaces failed: \(error)")
    }
}
