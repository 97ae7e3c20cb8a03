import BeMyEarsCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Node liveness: heartbeats in `bemyears_nodes`, eviction of nodes that stopped, leftovers of this node's
/// previous run.
extension PostgresClusterBus {
    /// What a heartbeat found about this node's previous heartbeat.
    enum HeartbeatOutcome: Hashable {
        /// Fresh: the other nodes count this node as live.
        case fresh
        /// Older than `staleAfter`, or gone: others may have evicted this node's sessions.
        case presumedDead
        /// The first heartbeat of this run.
        case first
    }

    /// `staleAfter` in whole microseconds, for SQL (`… * interval '1 microsecond'`).
    var staleMicroseconds: Int64 { CallRow.microseconds(configuration.staleAfter) }

    /// The first heartbeat, and this node's leftovers: registrations a previous run of the same node identity
    /// left behind (it crashed) are moved to a retired identity without a heartbeat, which the sweep then evicts
    /// like any dead node, so their calls end and their names are free again at once. False when cancelled.
    func start() async -> Bool {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                let retired = "\(node.rawValue)~\(epoch)"
                let moved = try await store.transaction { connection in
                    try await heartbeat(on: connection)
                    let rows = try await connection.query(
                        """
                        WITH moved AS (
                            UPDATE bemyears_registrations SET node = \(retired) WHERE node = \(node.rawValue)
                            RETURNING 1
                        )
                        SELECT count(*) FROM moved
                        """,
                        logger: store.queryLogger
                    )
                    var count: Int64 = 0
                    for try await value in rows.decode(Int64.self) { count = value }
                    return count
                }
                if moved > 0 {
                    logger.notice(
                        "bemyears.bus: sessions left by this node's previous run will be evicted",
                        metadata: ["node": "\(node)", "sessions": "\(moved)"]
                    )
                }
                return true
            } catch {
                if Task.isCancelled { return false }
                logger.warning("bemyears.bus: cannot start yet; retrying", metadata: ["error": "\(loggable(error))"])
                guard await pause(delay) else { return false }
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Upserts this node's heartbeat; says whether the previous one was stale (or the row gone).
    @discardableResult
    func heartbeat(on connection: PostgresConnection) async throws -> HeartbeatOutcome {
        let rows = try await connection.query(
            """
            SELECT heartbeat_at < clock_timestamp() - \(staleMicroseconds) * interval '1 microsecond'
            FROM bemyears_nodes WHERE node = \(node.rawValue) FOR UPDATE
            """,
            logger: store.queryLogger
        )
        var wasStale: Bool?
        for try await value in rows.decode(Bool.self) { wasStale = value }
        try await connection.query(
            """
            INSERT INTO bemyears_nodes (node) VALUES (\(node.rawValue))
            ON CONFLICT (node) DO UPDATE SET heartbeat_at = clock_timestamp()
            """,
            logger: store.queryLogger
        )
        switch wasStale {
        case nil: return .first
        case true?: return .presumedDead
        case false?: return .fresh
        }
    }

    func heartbeatLoop(onEvicted: @escaping @Sendable () async -> Void) async {
        while await pause(configuration.heartbeatInterval) {
            do {
                let outcome = try await store.bounded { [self] in
                    try await store.transaction { connection in
                        try await heartbeat(on: connection)
                    }
                }
                if outcome != .fresh {
                    logger.error(
                        "bemyears.bus: this node was taken for dead by the others; its sessions must register again",
                        metadata: ["node": "\(node)"]
                    )
                    await onEvicted()
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning(
                    "bemyears.bus: heartbeat failed",
                    metadata: ["node": "\(node)", "error": "\(loggable(error))"]
                )
            }
            enqueue(.echo)
        }
    }

    /// Looks for dead nodes at once, then every heartbeat interval.
    func sweepLoop(_ hub: SignalingHub) async {
        repeat {
            do {
                try await sweep(hub)
            } catch {
                if Task.isCancelled { return }
                logger.warning("bemyears.bus: looking for dead nodes failed", metadata: ["error": "\(loggable(error))"])
            }
        } while await pause(configuration.heartbeatInterval)
    }

    /// Evicts every node whose heartbeat is stale, and every node that holds registrations without a heartbeat
    /// row (a previous run's leftovers, or a node whose row was removed); then forgets them once empty.
    func sweep(_ hub: SignalingHub) async throws {
        let stale = staleMicroseconds
        let dead = try await store.bounded { [store, node] in
            let rows = try await store.client.query(
                """
                SELECT node FROM bemyears_nodes
                WHERE node <> \(node.rawValue)
                    AND heartbeat_at < clock_timestamp() - \(stale) * interval '1 microsecond'
                UNION
                SELECT DISTINCT r.node FROM bemyears_registrations r
                WHERE r.node <> \(node.rawValue)
                    AND NOT EXISTS (SELECT 1 FROM bemyears_nodes n WHERE n.node = r.node)
                ORDER BY 1
                """,
                logger: store.queryLogger
            )
            var dead: [String] = []
            for try await name in rows.decode(String.self) { dead.append(name) }
            return dead
        }
        for name in dead {
            logger.warning("bemyears.bus: evicting a dead node", metadata: ["node": "\(node)", "dead": "\(name)"])
            await hub.evictNode(NodeID(name))
            try await store.bounded { [store] () async throws -> Void in
                try await store.client.query(
                    """
                    DELETE FROM bemyears_nodes
                    WHERE node = \(name)
                        AND heartbeat_at < clock_timestamp() - \(stale) * interval '1 microsecond'
                        AND NOT EXISTS (SELECT 1 FROM bemyears_registrations WHERE node = \(name))
                    """,
                    logger: store.queryLogger
                )
                try await store.client.query(
                    """
                    DELETE FROM bemyears_bus_payloads
                    WHERE target_node = \(name) AND NOT EXISTS (SELECT 1 FROM bemyears_nodes WHERE node = \(name))
                    """,
                    logger: store.queryLogger
                )
            }
            state.withLock { $0.tracker.forget(name) }
        }
        let lifetime = CallRow.microseconds(Self.storedMessageLifetime)
        try await store.bounded { [store] () async throws -> Void in
            try await store.client.query(
                """
                DELETE FROM bemyears_bus_payloads
                WHERE created_at < clock_timestamp() - \(lifetime) * interval '1 microsecond'
                """,
                logger: store.queryLogger
            )
        }
    }
}
