import BeMyEarsCore
import Foundation
import PostgresNIO

/// `bemyears_registrations` ⇄ ``Registration``.
enum RegistrationRow {
    static let columns = "username, session, role, node, registered_at, interpreter_state, call_id"

    typealias Columns = (String, UUID, String, String, Date, String?, UUID?)

    static func decode(_ row: PostgresRow) throws -> Registration {
        let (name, session, roleText, node, registeredAt, stateText, call) = try row.decode(Columns.self)
        guard let username = Username(name) else { throw CorruptRow(table: "registrations", problem: "username") }
        guard let role = Role(rawValue: roleText) else { throw CorruptRow(table: "registrations", problem: "role") }
        var state: InterpreterState?
        if let stateText {
            guard let parsed = InterpreterState(rawValue: stateText) else {
                throw CorruptRow(table: "registrations", problem: "interpreter_state")
            }
            state = parsed
        }
        return Registration(
            username: username,
            role: role,
            session: SessionID(session),
            node: NodeID(node),
            registeredAt: registeredAt,
            interpreterState: state,
            call: call.map(CallID.init)
        )
    }

    static func decodeAll(_ rows: PostgresRowSequence) async throws -> [Registration] {
        var registrations: [Registration] = []
        for try await row in rows {
            registrations.append(try decode(row))
        }
        return registrations
    }
}
