import Foundation

/// PRESENCE: the AVAILABLE interpreters, pushed to every caller of this node after REGISTERED and whenever the
/// set changes.
extension SignalingHub {
    /// This node changed the set of AVAILABLE interpreters: tell the other nodes and refresh local callers.
    func presenceChanged() async {
        outbound.publishPresenceChange()
        await refreshPresence()
    }

    /// Reads the list from the store and sends it to each caller whose last PRESENCE differs.
    ///
    /// One refresh runs at a time; a request during a refresh makes it run once more with a fresh read, so
    /// bursts of changes coalesce and an older list is never sent after a newer one. A caller sent a PRESENCE
    /// less than ``SignalingConfiguration/presenceInterval`` ago gets this one when the interval has passed
    /// (the hub asks to be woken then), with whatever the list is by that time.
    ///
    /// - Parameter newcomer: A caller that just registered: the list changed for nobody else, so only it is sent
    ///   one (registering is then O(1), not O(callers)). Newcomers that arrive during a run are served by the next
    ///   run, still alone; a change of the list meanwhile makes the next run one for all callers (newcomers included).
    func refreshPresence(onlyFor newcomer: SessionID? = nil) async {
        guard !isRefreshingPresence else {
            if let newcomer {
                presenceNewcomers.append(newcomer)
            } else {
                presenceRefreshPending = true
            }
            return
        }
        isRefreshingPresence = true
        defer { isRefreshingPresence = false }
        var only = newcomer.map { [$0] }
        while true {
            let interpreters: [Username]
            do {
                interpreters = Array(
                    try await store.availableInterpreters().sorted().prefix(configuration.maximumPresenceEntries))
            } catch {
                log(.internalError)
                return
            }
            let callers = only ?? callerSessions()
            var heldUntil: Date?
            for caller in callers {
                if let due = await push(interpreters, to: caller) {
                    heldUntil = min(heldUntil ?? due, due)
                }
            }
            if let heldUntil { requestWake(at: heldUntil) }
            if presenceRefreshPending {
                presenceRefreshPending = false
                presenceNewcomers.removeAll()
                only = nil
            } else if !presenceNewcomers.isEmpty {
                only = presenceNewcomers
                presenceNewcomers.removeAll()
            } else {
                return
            }
        }
    }

    /// The sessions of callers, read in place (no copy of each session).
    private func callerSessions() -> [SessionID] {
        var callers: [SessionID] = []
        for index in sessions.indices where sessions.values[index].role == .caller {
            callers.append(sessions.keys[index])
        }
        return callers
    }

    /// Sends what coalescing held back (``SignalingOutbound/wake(at:)``).
    public func wake() async {
        guard let due = presenceWakeAt else { return }
        presenceWakeAt = nil
        if !Self.hasCome(due, at: clock.now) {
            requestWake(at: due)  // Woken early: ask again.
            return
        }
        await refreshPresence()
    }

    /// Whether `time` has come, give or take a millisecond: `Date` sums and a wake-up's sleep are not exact to the
    /// nanosecond, and a change held back for 99.9999 ms must not wait for another wake-up.
    private static func hasCome(_ time: Date, at now: Date) -> Bool {
        now.timeIntervalSince(time) > -0.001
    }

    /// Asks the outbound for a wake-up unless one at or before `time` is already asked for.
    private func requestWake(at time: Date) {
        if let pending = presenceWakeAt, pending <= time { return }
        presenceWakeAt = time
        outbound.wake(at: time)
    }

    /// Sends PRESENCE to one caller if it changed for them.
    /// - Returns: When to try again, if the change is held back because this caller's last PRESENCE is too recent.
    ///
    /// If the list shows the interpreter of the call this caller was last told about, that call has ended (an
    /// interpreter is AVAILABLE only outside calls) but the caller may not have received CALL_ENDED yet: it can
    /// still be on its way from the node or task that ended the call. Then the ending is sent first, from the
    /// store's record; the later copy is dropped as a duplicate. This keeps "CALL_ENDED before the PRESENCE that
    /// shows the interpreter AVAILABLE" across tasks and nodes.
    private func push(_ interpreters: [Username], to caller: SessionID) async -> Date? {
        guard let local = sessions[caller], !local.isClosing else { return nil }
        if let known = local.knownCall, interpreters.contains(known.peer) {
            let record: CallRecord?
            do {
                record = try await store.call(known.id)
            } catch {
                sessions[caller]?.presenceDeferred = true  // Retried when the ending arrives.
                return nil
            }
            if let record, let ending = Self.endingMessage(of: record) {
                deliverLocally(ending, to: caller)
            } else if record?.isLive == true {
                // The name is AVAILABLE on a new session while this call still winds down: wait for its ending.
                sessions[caller]?.presenceDeferred = true
                return nil
            } else if sessions[caller]?.knownCall?.id == known.id {
                sessions[caller]?.knownCall = nil  // Long gone from the store.
            }
        }
        guard let current = sessions[caller], !current.isClosing, current.lastPresence != interpreters else {
            sessions[caller]?.presenceDeferred = false
            return nil
        }
        let now = clock.now
        if let sentAt = current.presenceSentAt {
            let due = sentAt.adding(configuration.presenceInterval)
            if !Self.hasCome(due, at: now) { return due }
        }
        sessions[caller]?.lastPresence = interpreters
        sessions[caller]?.presenceSentAt = now
        sessions[caller]?.presenceDeferred = false
        outbound.sendPresence(interpreters, to: caller)
        return nil
    }

    /// Refreshes presence if a caller's PRESENCE was held back until it learned its call ended, and it now has.
    func refreshDeferredPresence(of session: SessionID) async {
        guard let local = sessions[session], local.presenceDeferred, local.knownCall == nil else { return }
        await refreshPresence()
    }
}
