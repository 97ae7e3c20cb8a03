public import BeMyEarsCore
public import Foundation
import PostgresNIO

/// The ``SignalingStore`` methods, each one transaction. The decisions mirror ``InMemorySignalingStore`` line by
/// line; the call and registration rules are the core's own functions applied to the locked rows.
extension PostgresSignalingStore: SignalingStore {
    public func register(_ registration: Registration) async throws -> RegistrationOutcome {
        try await bounded { [self] in
            // The username is the primary key and the session is unique: of two racing INSERTs the second waits for
            // the first to commit and then does nothing.
            let rows = try await client.query(
                """
                INSERT INTO bemyears_registrations (\(unescaped: RegistrationRow.columns))
                VALUES (\(registration.username.rawValue), \(registration.session.uuid), \(registration.role.rawValue),
                    \(registration.node.rawValue), \(registration.registeredAt),
                    \(registration.interpreterState?.rawValue), \(registration.call?.uuid))
                ON CONFLICT DO NOTHING
                RETURNING 1
                """,
                logger: queryLogger
            )
            var inserted = false
            for try await _ in rows { inserted = true }
            return inserted ? .registered : .usernameTaken
        }
    }

    public func unregister(_ session: SessionID) async throws -> Registration? {
        try await bounded { [self] in
            let rows = try await client.query(
                """
                DELETE FROM bemyears_registrations WHERE session = \(session.uuid)
                RETURNING \(unescaped: RegistrationRow.columns)
                """,
                logger: queryLogger
            )
            return try await RegistrationRow.decodeAll(rows).first
        }
    }

    public func registration(of username: Username) async throws -> Registration? {
        try await bounded { [self] in
            let rows = try await client.query(
                """
                SELECT \(unescaped: RegistrationRow.columns) FROM bemyears_registrations
                WHERE username = \(username.rawValue)
                """,
                logger: queryLogger
            )
            return try await RegistrationRow.decodeAll(rows).first
        }
    }

    public func registrations(on node: NodeID) async throws -> [Registration] {
        try await bounded { [self] in
            let rows = try await client.query(
                """
                SELECT \(unescaped: RegistrationRow.columns) FROM bemyears_registrations
                WHERE node = \(node.rawValue) ORDER BY username
                """,
                logger: queryLogger
            )
            return try await RegistrationRow.decodeAll(rows)
        }
    }

    public func setAvailability(_ state: InterpreterState, of session: SessionID) async throws -> AvailabilityChange {
        try await bounded { [self] in
            try await transaction { connection in
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: RegistrationRow.columns) FROM bemyears_registrations
                    WHERE session = \(session.uuid) FOR UPDATE
                    """,
                    logger: queryLogger
                )
                guard let registration = try await RegistrationRow.decodeAll(rows).first,
                    let current = registration.interpreterState
                else { return .notAnInterpreter }
                guard !current.isInCall else { return .refused(current: current) }
                guard current != state else { return .unchanged(current) }
                try await connection.query(
                    """
                    UPDATE bemyears_registrations SET interpreter_state = \(state.rawValue)
                    WHERE session = \(session.uuid)
                    """,
                    logger: queryLogger
                )
                return .changed(to: state)
            }
        }
    }

    public func availableInterpreters() async throws -> [Username] {
        try await bounded { [self] in
            let rows = try await client.query(
                """
                SELECT username FROM bemyears_registrations WHERE interpreter_state = 'AVAILABLE' ORDER BY username
                """,
                logger: queryLogger
            )
            var names: [Username] = []
            for try await name in rows.decode(String.self) {
                guard let username = Username(name) else {
                    throw CorruptRow(table: "registrations", problem: "username")
                }
                names.append(username)
            }
            return names
        }
    }

    public func createCall(_ request: CallRequest) async throws -> CallCreation {
        try await bounded { [self] in
            try await transaction { connection in
                // Both rows locked in one statement, in username order (the order every transaction locks
                // registrations in, so two of them never wait for each other in a cycle). Concurrent requests for
                // the same interpreter queue here; each sees the row as the previous one committed it.
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: RegistrationRow.columns) FROM bemyears_registrations
                    WHERE session = \(request.caller.session.uuid) OR username = \(request.interpreter.rawValue)
                    ORDER BY username FOR UPDATE
                    """,
                    logger: queryLogger
                )
                let locked = try await RegistrationRow.decodeAll(rows)
                guard let caller = locked.first(where: { $0.session == request.caller.session }) else {
                    return .callerNotRegistered
                }
                if let existing = caller.call { return .callerBusy(existing) }
                guard let interpreter = locked.first(where: { $0.username == request.interpreter }),
                    interpreter.role == .interpreter, let state = interpreter.interpreterState
                else { return .unknownInterpreter }
                guard state == .available else { return .interpreterBusy(state, call: interpreter.call) }

                let record = CallRecord(request, interpreter: interpreter.party)
                try await CallRow.insert(record, on: connection, logger: queryLogger)
                try await connection.query(
                    """
                    UPDATE bemyears_registrations
                    SET interpreter_state = \(InterpreterState.ringing.rawValue), call_id = \(record.id.uuid)
                    WHERE session = \(interpreter.session.uuid)
                    """,
                    logger: queryLogger
                )
                try await connection.query(
                    """
                    UPDATE bemyears_registrations SET call_id = \(record.id.uuid) WHERE session = \(caller.session.uuid)
                    """,
                    logger: queryLogger
                )
                return .created(record)
            }
        }
    }

    public func call(_ id: CallID) async throws -> CallRecord? {
        try await bounded { [self] in
            let rows = try await client.query(
                "SELECT \(unescaped: CallRow.columns) FROM bemyears_calls WHERE id = \(id.uuid)",
                logger: queryLogger
            )
            for try await row in rows {
                return try CallRow.decode(row)
            }
            return nil
        }
    }

    public func updateCall(_ id: CallID, with event: CallEvent, at now: Date) async throws -> CallUpdate {
        try await bounded { [self] in
            try await transaction { connection in
                let rows = try await connection.query(
                    "SELECT \(unescaped: CallRow.columns) FROM bemyears_calls WHERE id = \(id.uuid) FOR UPDATE",
                    logger: queryLogger
                )
                var loaded: CallRecord?
                for try await row in rows {
                    loaded = try CallRow.decode(row)
                }
                guard let original = loaded else {
                    return CallUpdate(
                        transition: .rejected(.unknownCall),
                        record: nil,
                        interpreterAvailableAgain: false
                    )
                }
                var record = original
                let transition = record.apply(event, at: now)
                if record != original {
                    try await CallRow.saveState(of: record, on: connection, logger: queryLogger)
                }
                var availableAgain = false
                switch transition {
                case .accepted, .ended:
                    // The parties' rows, by session (a name registered again by someone else is not a party).
                    let partyRows = try await connection.query(
                        """
                        SELECT \(unescaped: RegistrationRow.columns) FROM bemyears_registrations
                        WHERE session IN (\(record.caller.session.uuid), \(record.interpreter.session.uuid))
                        ORDER BY username FOR UPDATE
                        """,
                        logger: queryLogger
                    )
                    for before in try await RegistrationRow.decodeAll(partyRows) {
                        var registration = before
                        availableAgain = registration.apply(transition, of: record) || availableAgain
                        guard registration != before else { continue }
                        try await connection.query(
                            """
                            UPDATE bemyears_registrations
                            SET interpreter_state = \(registration.interpreterState?.rawValue),
                                call_id = \(registration.call?.uuid)
                            WHERE session = \(registration.session.uuid)
                            """,
                            logger: queryLogger
                        )
                    }
                case .relay, .notDue, .rejected:
                    break  // Registration.apply changes nothing for these.
                }
                return CallUpdate(transition: transition, record: record, interpreterAvailableAgain: availableAgain)
            }
        }
    }

    /// At most this many per call of ``dueCalls(at:)``; the next tick takes the rest.
    static let maximumDueCallsPerTick = 1_000

    public func dueCalls(at now: Date) async throws -> [CallID] {
        try await bounded { [self] in
            // `next_deadline` is stored to the microsecond, rounded down: a call can be listed up to 1 µs early, and
            // then `updateCall(.expire)` answers notDue. It is never listed late.
            let rows = try await client.query(
                """
                SELECT id FROM bemyears_calls WHERE next_deadline <= \(now)
                ORDER BY requested_at, id LIMIT \(Self.maximumDueCallsPerTick)
                """,
                logger: queryLogger
            )
            var ids: [CallID] = []
            for try await id in rows.decode(UUID.self) {
                ids.append(CallID(id))
            }
            return ids
        }
    }

    public func removeCalls(endedBefore cutoff: Date) async throws -> Int {
        try await bounded { [self] in
            let rows = try await client.query(
                """
                WITH gone AS (DELETE FROM bemyears_calls WHERE ended_at < \(cutoff) RETURNING 1)
                SELECT count(*) FROM gone
                """,
                logger: queryLogger
            )
            var removed = 0
            for try await count in rows.decode(Int64.self) {
                removed = Int(count)
            }
            return removed
        }
    }
}
