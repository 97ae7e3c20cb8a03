import BenchmarkSupport
import Foundation
import HummingbirdWSClient
import Logging
import NIOWebSocket
import Synchronization

/// One WebSocket client of the load generator, speaking BEMYEARS-PROTOCOL.md with plain JSON (independent of the
/// server's codec): it registers, sends HEARTBEAT every 15 s, hands every message it receives to `onMessage`, and
/// sends what `send(_:)` is given, until `close()`.
final class LoadClient: Sendable {
    /// A decoded server message and when it arrived (CLOCK_MONOTONIC nanoseconds).
    struct Message: @unchecked Sendable {
        let type: String
        let object: [String: Any]
        let arrived: Int64
    }

    let username: String
    private let outgoing: AsyncStream<String>.Continuation
    /// What the connection's task reports, shared with it by reference (atomics cannot be copied into it).
    private final class Flags: Sendable {
        let registered = Atomic<Bool>(false)
        let closed = Atomic<Bool>(false)
        let lastAck = Atomic<Int64>(0)
        /// When REGISTER was written, and REGISTERED arrived (0: not yet).
        let registerSent = Atomic<Int64>(0)
        let registeredAt = Atomic<Int64>(0)
        /// When the last HEARTBEAT was written; each ACK's delay after it.
        let heartbeatSent = Atomic<Int64>(0)
        let ackDelays = Mutex<[Int64]>([])
    }

    private let flags: Flags
    private let task: Task<Void, Never>

    var isRegistered: Bool { flags.registered.load(ordering: .acquiring) }
    var isClosed: Bool { flags.closed.load(ordering: .acquiring) }
    /// When the last HEARTBEAT_ACK arrived (0: none yet).
    var lastHeartbeatAck: Int64 { flags.lastAck.load(ordering: .acquiring) }
    /// From writing REGISTER to REGISTERED's arrival, in nanoseconds (nil: not registered).
    var registerLatency: Int64? {
        let arrived = flags.registeredAt.load(ordering: .acquiring)
        return arrived == 0 ? nil : arrived - flags.registerSent.load(ordering: .acquiring)
    }
    /// The delay of each HEARTBEAT_ACK after its HEARTBEAT, in nanoseconds.
    var heartbeatAckDelays: [Int64] { flags.ackDelays.withLock { $0 } }

    init(
        url: String,
        username: String,
        role: String,
        heartbeat: Duration = .seconds(15),
        onMessage: @escaping @Sendable (LoadClient, Message) -> Void = { _, _ in }
    ) {
        self.username = username
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        outgoing = continuation
        let box = Mutex<LoadClient?>(nil)
        let flags = Flags()
        self.flags = flags
        var logger = Logger(label: "bemyears-load")
        logger.logLevel = .critical
        task = Task {
            do {
                try await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
                    flags.registerSent.store(monotonicNanoseconds(), ordering: .releasing)
                    try await outbound.write(
                        .text(
                            #"{"type":"REGISTER","payload":{"username":"\#(username)","role":"\#(role)"}}"#))
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await text in stream { try await outbound.write(.text(text)) }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        group.addTask {
                            while !Task.isCancelled {
                                try await Task.sleep(for: heartbeat)
                                flags.heartbeatSent.store(monotonicNanoseconds(), ordering: .releasing)
                                try await outbound.write(.text(#"{"type":"HEARTBEAT"}"#))
                            }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message,
                                let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                                let type = object["type"] as? String
                            else { continue }
                            let arrived = monotonicNanoseconds()
                            if type == "REGISTERED" {
                                flags.registeredAt.store(arrived, ordering: .releasing)
                                flags.registered.store(true, ordering: .releasing)
                            }
                            if type == "HEARTBEAT_ACK" {
                                flags.lastAck.store(arrived, ordering: .releasing)
                                let sent = flags.heartbeatSent.load(ordering: .acquiring)
                                if sent > 0 { flags.ackDelays.withLock { $0.append(arrived - sent) } }
                            }
                            if let client = box.withLock({ $0 }) {
                                onMessage(client, Message(type: type, object: object, arrived: arrived))
                            }
                        }
                        group.cancelAll()
                    }
                }
            } catch {}
            flags.closed.store(true, ordering: .releasing)
            box.withLock { $0 = nil }  // ends the cycle task → handler → box → client
        }
        box.withLock { $0 = self }
    }

    /// Sends one JSON text frame.
    func send(_ json: String) {
        outgoing.yield(json)
    }

    /// Closes the socket (normal closure) and waits until it is gone.
    func close() async {
        outgoing.finish()
        await task.value
    }

    /// Waits until registered (or `timeout`).
    func waitRegistered(timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isRegistered, !isClosed, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return isRegistered
    }
}
