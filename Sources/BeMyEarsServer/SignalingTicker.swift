import BeMyEarsCore
import ServiceLifecycle

/// Drives the hub's timers: heartbeat expiry, ring/connect deadlines, pruning and the 5-minute statistics line
/// (``SignalingHub/tick()``), every `interval` until graceful shutdown.
struct SignalingTicker: Service {
    let hub: SignalingHub
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                await hub.tick()
            }
        }
    }
}
