import BeMyEarsCore
import Foundation
import ServiceLifecycle

/// Wakes the hub when it asked to be (``SignalingOutbound/wake(at:)``): a PRESENCE held back by coalescing is
/// sent when its 100 ms have passed. Each request sleeps in a child task of its own, so an earlier request is
/// never stuck behind a later one; the hub asks only when nothing earlier is pending, so there are few.
struct HubWakeService: Service {
    let requests: AsyncStream<Date>
    let hub: SignalingHub

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await time in requests {
                    group.addTask {
                        let delay = max(time.timeIntervalSinceNow, 0)
                        guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
                        await hub.wake()
                    }
                }
                group.cancelAll()
            }
        }
    }
}
