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
    /// bursts of changes coalesce and an older list is never sent after a newer one.
    func refreshPresence() async {
        guard !isRefreshingPresence else {
            presenceRefreshPending = true
            return
        }
        isRefreshingPresence = true
        defer { isRefreshingPresence = false }
        repeat {
            presenceRefreshPending = false
            let interpreters: [Username]
            do {
                interpreters = try await store.availableInterpreters().sorted()
            } catch {
                log(.internalError)
                return
            }
            let callers = sessions.values.filter { $0.role == .caller }.map(\.id)
            for caller in callers {
                await push(interpreters, to: caller)
            }
        } while presenceRefreshPending
    }

    /// Sends PRESENCE to one caller if it changed for them.
    ///
    /// If the list shows the interpreter of the call this caller was last told about, that call has ended (an
    /// interpreter is AVAILABLE only outside calls) but the caller may not have received CALL_ENDED yet: it can
    /// still be on its way from the node or task that ended the call. Then the ending is sent first, from the
    /// store's record; the later copy is dropped as a duplicate. This keeps "CALL_ENDED before the PRESENCE that
    /// shows the interpreter AVAILABLE" across tasks and nodes.
    private func push(_ interpreters: [Username], to caller: SessionID) async {
        guard let local = sessions[caller], !local.isClosing else { return }
        if let known = local.knownCall, interpreters.contains(known.peer) {
            let record: CallRecord?
            do {
                record = try await store.call(known.id)
            } catch {
                sessions[caller]?.presenceDeferred = true  // Retried when the ending arrives.
                return
            }
            if let record, let ending = Self.endingMessage(of: record) {
                deliverLocally(ending, to: caller)
            } else if record?.isLive == true {
                // The name is AVAILABLE on a new session while this call still winds down: wait for its ending.
                sessions[caller]?.presenceDeferred = true
                return
            } else if sessions[caller]?.knownCall?.id == known.id {
                sessions[caller]?.knownCall = nil  // Long gone from the store.
            }
        }
        guard let current = sessions[caller], !current.isClosing, current.lastPresence != interpreters else {
            sessions[caller]?.presenceDeferred = false
            return
        }
        sessions[caller]?.lastPresence = interpreters
        sessions[caller]?.presenceDeferred = false
        outbound.send(.presence(interpreters), to: caller)
    }

    /// Refreshes presence if a caller's PRESENCE was held back until it learned its call ended, and it now has.
    func refreshDeferredPresence(of session: SessionID) async {
        guard let local = sessions[session], local.presenceDeferred, local.knownCall == nil else { return }
        await refreshPresence()
    }
}
