import Foundation

/// What the hub does with the result of a call update: forward, announce the ending, update presence.
extension SignalingHub {
    /// Performs an accepted or ended transition (rejections and relays are handled by the caller).
    func perform(_ update: CallUpdate, from session: SessionID?) async {
        guard let record = update.record else { return }
        switch update.transition {
        case .accepted:
            deliver(.state(.inCall), to: record.interpreter)
            deliver(
                .callAccept(record.id, from: record.interpreter.username, to: record.caller.username),
                to: record.caller
            )
            log(.callAccepted, callId: record.id, session: session, role: .interpreter)
        case .ended(let reason):
            await announceEnding(
                of: record,
                reason: reason,
                interpreterAvailableAgain: update.interpreterAvailableAgain
            )
        case .relay, .notDue, .rejected:
            break
        }
    }

    /// Tells both parties a call ended, then (if it did) that the interpreter is AVAILABLE again: CALL_ENDED (or
    /// CALL_DECLINE) always goes out before the STATE and the PRESENCE that follow from it.
    func announceEnding(of record: CallRecord, reason: CallEndReason, interpreterAvailableAgain: Bool) async {
        counters.callsEnded += 1
        if let ending = Self.endingMessage(of: record) {
            deliver(ending, to: record.caller)
            if reason == .declined {
                // The interpreter sent the decline; its client knows. Forget the call on its session.
                if record.interpreter.node == node, sessions[record.interpreter.session]?.knownCall?.id == record.id {
                    sessions[record.interpreter.session]?.knownCall = nil
                }
            } else {
                deliver(ending, to: record.interpreter)
            }
        }
        log(.callEnded(reason), callId: record.id)
        if interpreterAvailableAgain {
            deliver(.state(.available), to: record.interpreter)
            await presenceChanged()
        } else if record.caller.node == node {
            await refreshDeferredPresence(of: record.caller.session)
        }
    }

    /// CALL_DECLINE for a declined call, CALL_ENDED {reason} for any other ended call, nil for a live one.
    static func endingMessage(of record: CallRecord) -> Envelope? {
        guard let ending = record.ending else { return nil }
        if ending.reason == .declined {
            return .callDecline(record.id, from: record.interpreter.username, to: record.caller.username)
        }
        return .callEnded(record.id, reason: ending.reason)
    }
}
