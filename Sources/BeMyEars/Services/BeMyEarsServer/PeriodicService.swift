import ServiceLifecycle

/// Runs `action` every `interval` until graceful shutdown. The server has two:
/// - the hub's ticker (``SignalingHub/tick()`` every 250 ms): heartbeat expiry, ring/connect deadlines, pruning and
///   the 5-minute statistics line;
/// - the outbox watchdog (``WebSocketOutbound/dropStalled(now:after:)``): drops the connections of clients whose
///   socket has taken nothing for the stall timeout while a frame waited. One sweep over the open connections, so
///   the cost per message is a clock read, not a timer.
struct PeriodicService: Service {
    let interval: Duration
    let action: @Sendable () async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                await action()
            }
        }
    }
}
