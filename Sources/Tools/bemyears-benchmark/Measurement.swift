import BenchmarkSupport
import Foundation
import Synchronization

/// What one server did under the load of ``measure(_:connections:watchers:pairs:)``.
struct SignalingFigures {
    var name: String
    var connections = 0
    var held = 0
    var residentPerConnectionKiB = Double.nan
    var registerP50Ms = Double.nan
    var registerP99Ms = Double.nan
    /// REGISTER → REGISTERED one at a time, on a server holding the connections (its own latency, not a queue's).
    var quietRegisterP50Ms = Double.nan
    var heartbeatAckP99Ms = Double.nan
    /// The server's CPU while holding the connections (heartbeats only), in % of one core.
    var holdCPUPercent = Double.nan
    var fanOutWatchers = 0
    var fanOutP50Ms = Double.nan
    var fanOutP99Ms = Double.nan
    var callSetupsPerSecond = Double.nan
    var callSetupP99Ms = Double.nan
}

/// Loads one running server the same way, whichever it is:
/// 1. connections held: `connections` callers register (REGISTER → REGISTERED latency) and heartbeat every 15 s;
///    after 35 s (past the 20 s TTL) how many are still registered and acknowledged, the server's resident memory
///    per connection and its CPU over that quiet hold;
/// 2. presence fan-out: the callers beyond the first `watchers` leave, so that a change goes to exactly `watchers`
///    callers; an interpreter toggles Go Online/Offline 40 times, 250 ms apart; latency from its SET_STATE to each
///    caller holding the matching PRESENCE;
/// 3. call setups: `pairs` caller/interpreter pairs loop CALL_REQUEST → CALL_ACCEPT → HANGUP → CALL_ENDED for 10 s
///    (counted, and timed from CALL_REQUEST, at CALL_ACCEPT reaching the caller). A pair sends hundreds of messages
///    a second, so the servers run with the rate limit raised (`--rate-limit`): this phase measures them, not the
///    protocol's 50 messages per second per socket.
func measure(_ server: ServerUnderTest, name: String, connections: Int, watchers: Int, pairs pairCount: Int) async
    -> SignalingFigures
{
    var figures = SignalingFigures(name: name, connections: connections)
    let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    let url = "ws://127.0.0.1:\(server.port)/ws"
    let pid = server.process.processIdentifier
    let baseline = residentBytes(of: pid)

    // 1. Connections held, with heartbeats, past the presence TTL.
    let fanOut = FanOutRecorder()
    var callers: [LoadClient] = []
    for index in 0..<connections {
        let watching = index < watchers
        callers.append(
            LoadClient(url: url, username: "c\(run)\(index)", role: "caller") { client, message in
                if watching, message.type == "PRESENCE" { fanOut.record(message, watcher: client.username) }
            })
        // A ramp, not a SYN flood: 200 connections per 50 ms, and never more than 200 handshakes unanswered.
        if index % 200 == 199 { try? await Task.sleep(for: .milliseconds(50)) }
        while LoadClient.handshakesPending >= 200 { try? await Task.sleep(for: .milliseconds(1)) }
    }
    let registered = await LoadClient.waitRegistered(callers)
    say("\(name): registered \(registered) of \(connections) callers")
    let failures = LoadClient.failures
    if let first = failures.first {
        say("\(name): \(failures.count) connections failed so far in this run, the first: \(first)")
    }
    let registerLatencies = callers.compactMap(\.registerLatency).map { Double($0) / 1e6 }
    figures.registerP50Ms = percentile(registerLatencies, 0.5)
    figures.registerP99Ms = percentile(registerLatencies, 0.99)
    let cpuBefore = cpuSeconds(of: pid)
    let holdStart = ContinuousClock.now
    try? await Task.sleep(for: .seconds(35))
    if let cpuBefore, let cpuAfter = cpuSeconds(of: pid) {
        figures.holdCPUPercent = 100 * (cpuAfter - cpuBefore) / (milliseconds(ContinuousClock.now - holdStart) / 1000)
    }
    let now = monotonicNanoseconds()
    figures.held =
        callers.filter { !$0.isClosed && $0.isRegistered && now - $0.lastHeartbeatAck < 20_000_000_000 }
        .count
    figures.heartbeatAckP99Ms = percentile(callers.flatMap(\.heartbeatAckDelays).map { Double($0) / 1e6 }, 0.99)
    let loaded = residentBytes(of: pid)
    figures.residentPerConnectionKiB = Double(loaded - baseline) / Double(max(1, figures.held)) / 1024

    // 1b. Registrations one at a time: the ramp above measures a burst of 200 handshakes and REGISTERs sharing
    // the cores with this load generator; this is the latency a user registering alone sees.
    var quiet: [Double] = []
    for index in 0..<100 {
        let client = LoadClient(url: url, username: "q\(run)\(index)", role: "caller")
        if await client.waitRegistered(), let latency = client.registerLatency { quiet.append(Double(latency) / 1e6) }
        await client.close()
    }
    figures.quietRegisterP50Ms = percentile(quiet, 0.5)

    // 2. Presence fan-out to the watchers, and to no one else.
    await LoadClient.close(Array(callers[watchers...]))
    callers = Array(callers[..<watchers])
    try? await Task.sleep(for: .milliseconds(500))  // the server has seen them go
    let interpreter = LoadClient(url: url, username: "i\(run)fan", role: "interpreter")
    guard await interpreter.waitRegistered() else { failBenchmark("\(name): the fan-out interpreter did not register") }
    var latencies: [Double] = []
    for toggle in 0..<40 {
        let online = toggle % 2 == 0
        fanOut.expect(interpreter: interpreter.username, present: online, watchers: watchers)
        let sent = monotonicNanoseconds()
        interpreter.send(#"{"type":"SET_STATE","payload":{"state":"\#(online ? "AVAILABLE" : "UNAVAILABLE")"}}"#)
        let arrivals = await fanOut.wait(timeout: .seconds(10))
        latencies += arrivals.map { Double($0 - sent) / 1e6 }
        if arrivals.count < watchers {
            say("\(name): toggle \(toggle): only \(arrivals.count) of \(watchers) watchers updated")
        }
        try? await Task.sleep(for: .milliseconds(250))
    }
    figures.fanOutWatchers = watchers
    figures.fanOutP50Ms = percentile(latencies, 0.5)
    figures.fanOutP99Ms = percentile(latencies, 0.99)
    await LoadClient.close(callers + [interpreter])
    callers = []

    // 3. Call setups per second.
    let setups = CallSetups()
    var pairs: [(LoadClient, LoadClient)] = []
    for index in 0..<pairCount {
        let interpreterName = "i\(run)p\(index)"
        let interpreter = LoadClient(url: url, username: interpreterName, role: "interpreter") { client, message in
            switch message.type {
            case "REGISTERED": client.send(#"{"type":"SET_STATE","payload":{"state":"AVAILABLE"}}"#)
            case "CALL_REQUEST":
                if let callId = message.callId { client.send(#"{"type":"CALL_ACCEPT","callId":"\#(callId)"}"#) }
            default: break
            }
        }
        let caller = LoadClient(url: url, username: "c\(run)p\(index)", role: "caller") { client, message in
            guard setups.running.load(ordering: .acquiring) else { return }
            switch message.type {
            case "CALL_ACCEPT":
                setups.accepted(by: client.username, at: message.arrived)
                if let callId = message.callId { client.send(#"{"type":"HANGUP","callId":"\#(callId)"}"#) }
            case "CALL_ENDED", "BUSY", "CALL_DECLINE":
                setups.requested(by: client.username)
                client.send(#"{"type":"CALL_REQUEST","to":"\#(interpreterName)"}"#)
            default: break
            }
        }
        pairs.append((caller, interpreter))
    }
    let pairClients = pairs.flatMap { [$0.0, $0.1] }
    guard await LoadClient.waitRegistered(pairClients) == pairClients.count else {
        failBenchmark("\(name): a caller/interpreter pair did not register")
    }
    try? await Task.sleep(for: .milliseconds(500))  // interpreters online
    let start = ContinuousClock.now
    for (caller, interpreter) in pairs {
        setups.requested(by: caller.username)
        caller.send(#"{"type":"CALL_REQUEST","to":"\#(interpreter.username)"}"#)
    }
    try? await Task.sleep(for: .seconds(10))
    setups.running.store(false, ordering: .releasing)
    let elapsed = milliseconds(ContinuousClock.now - start) / 1000
    let times = setups.times
    figures.callSetupsPerSecond = Double(times.count) / elapsed
    figures.callSetupP99Ms = percentile(times, 0.99)
    await LoadClient.close(pairClients)
    return figures
}

/// Call setups of phase 3: when each caller last sent CALL_REQUEST, and each setup's time to CALL_ACCEPT.
private final class CallSetups: Sendable {
    let running = Atomic<Bool>(true)
    private let state = Mutex<(sent: [String: Int64], times: [Double])>(([:], []))

    func requested(by caller: String) {
        let now = monotonicNanoseconds()
        state.withLock { $0.sent[caller] = now }
    }

    func accepted(by caller: String, at arrived: Int64) {
        state.withLock { state in
            guard let sent = state.sent.removeValue(forKey: caller) else { return }
            state.times.append(Double(arrived - sent) / 1e6)
        }
    }

    var times: [Double] { state.withLock { $0.times } }
}
