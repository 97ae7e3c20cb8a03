import BeMyEarsCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The publishing half: one task turns the queue into NOTIFYs, in order, a batch per statement.
extension PostgresClusterBus {
    /// Notices per statement at most, and stored message bytes per statement at most.
    static let maximumBatchNotices = 100
    static let maximumBatchBytes = 2 * 1_048_576

    /// A batch ready for `bemyears_bus_publish`.
    struct Batch {
        var notices: [String] = []
        var payloadIDs: [UUID] = []
        var payloadTargets: [String] = []
        var payloadBodies: [String] = []
        var bytes = 0
    }

    func publishLoop() async {
        var sequence: UInt64 = 0
        for await _ in wakeUps {
            while let items = takeBatch() {
                for batch in encode(items, sequence: &sequence) {
                    guard await publish(batch) else { return }
                }
            }
        }
    }

    /// The next items to publish, in queue order.
    private func takeBatch() -> [Outgoing]? {
        state.withLock { state -> [Outgoing]? in
            guard state.queuedCount > 0 else { return nil }
            let end = min(state.queue.count, state.queueHead + Self.maximumBatchNotices)
            let items = Array(state.queue[state.queueHead..<end])
            state.queueHead = end
            if state.queueHead == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.queueHead = 0
            }
            return items
        }
    }

    /// Numbers the items and turns each into a notice (and a stored body when it is too large to notify), in
    /// batches of at most ``maximumBatchBytes`` stored bytes.
    func encode(_ items: [Outgoing], sequence: inout UInt64) -> [Batch] {
        var batches: [Batch] = []
        var batch = Batch()
        for item in items {
            var notice = BusNotice(source: node.rawValue, epoch: epoch, sequence: sequence + 1, kind: .presence)
            var storedText: String?
            switch item {
            case .presence:
                break
            case .echo:
                notice.kind = .echo
            case .forward(let envelope, let session, let target):
                let text = EnvelopeCodec.encode(envelope)
                guard text.utf8.count <= Self.maximumMessageBytes else {
                    logger.error(
                        "bemyears.bus: a message too large to forward was dropped",
                        metadata: ["bytes": "\(text.utf8.count)", "target": "\(target)"]
                    )
                    continue
                }
                notice.kind = .forward
                notice.target = target.rawValue
                notice.session = session.uuid
                notice.text = text
                storedText = text
            }
            guard var encoded = try? notice.encoded() else { continue }
            if encoded.utf8.count > BusNotice.maximumPayloadBytes, let text = storedText, let target = notice.target {
                let id = UUID()
                notice.kind = .stored
                notice.text = nil
                notice.payload = id
                guard let reference = try? notice.encoded() else { continue }
                encoded = reference
                if batch.bytes + text.utf8.count > Self.maximumBatchBytes, !batch.notices.isEmpty {
                    batches.append(batch)
                    batch = Batch()
                }
                batch.payloadIDs.append(id)
                batch.payloadTargets.append(target)
                batch.payloadBodies.append(text)
                batch.bytes += text.utf8.count
            }
            sequence += 1
            batch.notices.append(encoded)
        }
        if !batch.notices.isEmpty { batches.append(batch) }
        return batches
    }

    /// Publishes a batch, retrying for a while when the database fails; false once the task is cancelled.
    ///
    /// A retry after a failure whose commit is uncertain may publish the batch twice: receivers drop the repeat by
    /// sequence number, and the stored rows by their ids.
    func publish(_ batch: Batch) async -> Bool {
        var delay = Duration.milliseconds(50)
        let giveUp = ContinuousClock.now + configuration.staleAfter
        while true {
            do {
                let query: PostgresQuery = """
                    SELECT bemyears_bus_publish(\(configuration.channel), \(batch.notices), \(batch.payloadIDs),
                        \(batch.payloadTargets), \(batch.payloadBodies))
                    """
                try await store.bounded { [store] in
                    for try await _ in try await store.client.query(query, logger: store.queryLogger) {}
                }
                return true
            } catch {
                if Task.isCancelled { return false }
                guard ContinuousClock.now < giveUp else {
                    logger.error(
                        "bemyears.bus: notices could not be published and were dropped",
                        metadata: ["count": "\(batch.notices.count)", "error": "\(loggable(error))"]
                    )
                    return true
                }
                logger.warning("bemyears.bus: publishing failed; retrying", metadata: ["error": "\(loggable(error))"])
                guard await pause(delay) else { return false }
                delay = min(delay * 2, .seconds(2))
            }
        }
    }
}
