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

        // Only when the earliest expiry the last scan saw has come: activity only moves a session's expiry later,
        // and a new session's comes after every existing one's, so none can expire before it. With heartbeats every
        // 15 s and a 20 s TTL that is a scan every few seconds instead of four a second over every connection.
        // Read in place (no copy of each session with its queue and strings).
        var expired: [SessionID] = []
        if now >= nextExpiryScanAt {
            let ttl = configuration.presenceTTL
            var earliest = now.adding(ttl)
            for index in sessions.indices {
                let session = sessions.values[index]
                guard !session.isClosing else { continue }
                if session.isExpired(at: now, ttl: ttl) {
                    expired.append(sessions.keys[index])
                } else {
                    earliest = min(earliest, session.expiry(ttl: ttl))
                }
            }
            nextExpiryScanAt = earliest
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
