import BeMyEarsCore
import Foundation
import Logging
import PostgresNIO

/// `bemyears_calls` ⇄ ``CallRecord``: one plain column per field, plus the derived `next_deadline` that
/// ``SignalingStore/dueCalls(at:)`` reads through an index.
enum CallRow {
    static let columns = """
        id, caller_username, caller_session, caller_node, interpreter_username, interpreter_session, \
        interpreter_node, requested_at, ring_timeout_us, answer_timeout_us, connect_timeout_us, state, accepted_at, \
        answer_relayed, video_visible, ended_at, end_reason
        """

    typealias Columns = (
        UUID, String, UUID, String, String, UUID, String, Date, Int64, Int64, Int64, String, Date?, Bool, Bool, Date?,
        String?
    )

    static func decode(_ row: PostgresRow) throws -> CallRecord {
        let (
            id, callerName, callerSession, callerNode, interpreterName, interpreterSession, interpreterNode,
            requestedAt, ring, answer, connect, stateText, acceptedAt, answerRelayed, videoVisible, endedAt, reasonText
        ) = try row.decode(Columns.self)
        guard let callerUsername = Username(callerName), let interpreterUsername = Username(interpreterName) else {
            throw CorruptRow(table: "calls", problem: "username")
        }
        let state: CallRecord.State
        switch (stateText, acceptedAt, endedAt, reasonText.flatMap(CallEndReason.init(rawValue:))) {
        case ("ringing", _, _, _):
            state = .ringing
        case ("accepted", let acceptedAt?, _, _):
            state = .accepted(at: acceptedAt, answerRelayed: answerRelayed, videoVisible: videoVisible)
        case ("ended", _, let endedAt?, let reason?):
            state = .ended(at: endedAt, reason: reason)
        default:
            throw CorruptRow(table: "calls", problem: "state \(stateText)")
        }
        return CallRecord(
            id: CallID(id),
            caller: CallParty(username: callerUsername, session: SessionID(callerSession), node: NodeID(callerNode)),
            interpreter: CallParty(
                username: interpreterUsername,
                session: SessionID(interpreterSession),
                node: NodeID(interpreterNode)
            ),
            requestedAt: requestedAt,
            timeouts: CallTimeouts(
                ring: .microseconds(ring),
                answer: .microseconds(answer),
                connect: .microseconds(connect)
            ),
            state: state
        )
    }

    /// The values of the columns ``CallRecord/apply(_:at:)`` can change, in the order of ``saveState(of:on:)``.
    struct MutableColumns {
        var state: String
        var acceptedAt: Date?
        var answerRelayed: Bool
        var videoVisible: Bool
        var endedAt: Date?
        var endReason: String?
        var nextDeadline: Date?

        init(_ record: CallRecord) {
            answerRelayed = false
            videoVisible = false
            switch record.state {
            case .ringing:
                state = "ringing"
            case .accepted(let at, let answer, let video):
                state = "accepted"
                acceptedAt = at
                answerRelayed = answer
                videoVisible = video
            case .ended(let at, let reason):
                state = "ended"
                endedAt = at
                endReason = reason.rawValue
            }
            nextDeadline = record.nextDeadline?.date
        }
    }

    static func insert(_ record: CallRecord, on connection: PostgresConnection, logger: Logger) async throws {
        let fields = MutableColumns(record)
        try await connection.query(
            """
            INSERT INTO bemyears_calls (\(unescaped: columns), next_deadline) VALUES (
                \(record.id.uuid), \(record.caller.username.rawValue), \(record.caller.session.uuid),
                \(record.caller.node.rawValue), \(record.interpreter.username.rawValue),
                \(record.interpreter.session.uuid), \(record.interpreter.node.rawValue), \(record.requestedAt),
                \(microseconds(record.timeouts.ring)), \(microseconds(record.timeouts.answer)),
                \(microseconds(record.timeouts.connect)), \(fields.state), \(fields.acceptedAt),
                \(fields.answerRelayed), \(fields.videoVisible), \(fields.endedAt), \(fields.endReason),
                \(fields.nextDeadline))
            """,
            logger: logger
        )
    }

    static func saveState(of record: CallRecord, on connection: PostgresConnection, logger: Logger) async throws {
        let fields = MutableColumns(record)
        try await connection.query(
            """
            UPDATE bemyears_calls SET state = \(fields.state), accepted_at = \(fields.acceptedAt),
                answer_relayed = \(fields.answerRelayed), video_visible = \(fields.videoVisible),
                ended_at = \(fields.endedAt), end_reason = \(fields.endReason), next_deadline = \(fields.nextDeadline)
            WHERE id = \(record.id.uuid)
            """,
            logger: logger
        )
    }

    /// A duration in whole microseconds (PostgreSQL's time resolution), clamped to what `bigint` holds.
    static func microseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        let value = parts.seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !value.overflow else { return parts.seconds < 0 ? Int64.min : Int64.max }
        return value.partialValue.addingReportingOverflow(parts.attoseconds / 1_000_000_000_000).partialValue
    }
}
