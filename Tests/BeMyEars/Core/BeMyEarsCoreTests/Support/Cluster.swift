import BeMyEarsCore
import BeMyEarsTestSupport
import Foundation
import TestSupport

/// Several nodes sharing one store and one clock, connected by an ordered in-memory channel that the test pumps
/// explicitly (the role PostgreSQL NOTIFY plays in production).
struct Cluster {
    let clock = ManualClock()
    let store = InMemorySignalingStore()
    let nodes: [Harness]

    init(nodeCount: Int) {
        let clock = self.clock
        let store = self.store
        let callIDs = CallIDGenerator.sequential()
        nodes = (0..<nodeCount).map { index in
            Harness(node: NodeID("node\(index)"), store: store, clock: clock, callIDs: callIDs)
        }
    }

    /// Delivers everything the nodes put on the channel, in order, until it is quiet.
    func pump() async throws {
        var delivered = true
        while delivered {
            delivered = false
            for source in nodes {
                for item in source.outbound.takeBus() {
                    delivered = true
                    switch item {
                    case .forward(let forward):
                        let target = try nodes.first { $0.hub.node == forward.node }
                            .unwrap(or: "no node \(forward.node)")
                        await target.hub.deliver(try EnvelopeCodec.decode(forward.text), to: forward.session)
                    case .presenceChanged:
                        for other in nodes where other.hub.node != source.hub.node {
                            await other.hub.presenceDidChange()
                        }
                    }
                }
            }
        }
    }
}

extension Optional {
    func unwrap(or message: String) throws -> Wrapped {
        guard let value = self else { throw MissingValue(description: message) }
        return value
    }
}
