import Foundation

/// The periodic work: heartbeat expiry, call deadlines, pruning, statistics.
extension SignalingHub {
    /// Fires whatever is due at the clock's current time. Call it every few hundred milliseconds (timers are as
    /// precise as that; messages that arrive after a deadline are refused even before the tick that fires it).
    ///
    /// - Sessions without an application message for the presence TTL (20 s): closed 4001, call ended
    ///   HEARTBEAT_EXPIRED.
    /// - Calls past a deadline in the store (whichever node created them): RING_TIMEOUT or CONNECT_TIMEOUT; the
    ///   store's compare-and-set makes sure only one node ends each.
    /// - Ended calls past REPORT_ABUSE's window are removed; statistics are logged every 5 minutes.
    /// - Sessions that left and HANGUPs sent while the store was unreachable are taken to it now.
    public func tick() async {
        guard !isTicking else { return }
        isTicking = true
        defer { isTicking = false }
        let now = clock.now

        // What the store could not take earlier (e.g. PostgreSQL was restarting): in order, until one fails.
        let retries = pendingRetries
        pendingRetries.removeAll()
        for (index, work) in retries.enumerated() where !(await retrying(work)) {
            pendingRetries.append(contentsOf: retries[(index + 1)...])
            break
        }

        // Read in place (no copy of each session with its queue and strings: this runs 4 times a second over
        // every connection of the node).
        var expired: [SessionID] = []
        for index in sessions.indices where sessions.values[index].isExpired(at: now, ttl: configuration.presenceTTL) {
            expired.append(sessions.keys[index])
        }
        for session in expired {
            guard sessions[session]?.beginTermination(.heartbeatExpired) == true else { continue }
            await drain(session)
        }

        do {
            for id in try await store.dueCalls(at: now) {
                let update = try await store.updateCall(id, with: .expire, at: now)
                await perform(update, from: nil)
            }
            if now >= nextPruneAt {
                nextPruneAt = now.adding(configuration.pruneInterval)
                let cutoff = now.addingTimeInterval(-configuration.abuseReportWindow.timeInterval)
                _ = try await store.removeCalls(endedBefore: cutoff)
            }
        } catch {
            log(.internalError)
        }

        if let due = presenceWakeAt, now >= due {
            await wake()  // A lost wake-up costs a tick's delay, not a stale list.
        }

        if now >= nextStatisticsAt {
            nextStatisticsAt = now.adding(configuration.statisticsInterval)
            log(.statistics(statistics()))
            counters = SignalingStatistics()
        }
    }
}
