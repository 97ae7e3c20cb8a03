import PostgresNIO

/// A one-line description of a database error that is safe to log: the error's kind, SQLSTATE and the server's
/// primary message — never the query's bound values (an SDP body, an ICE candidate, a username) nor the server's
/// DETAIL line (it can quote key values).
func loggable(_ error: any Error) -> String {
    switch error {
    case let error as PSQLError:
        var text = "\(error.code)"
        if let state = error.serverInfo?[.sqlState] { text += " \(state)" }
        if let message = error.serverInfo?[.message] { text += ": \(message)" }
        return text
    case let error as PostgresTransactionError:
        if let inner = error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError {
            return "transaction: " + loggable(inner)
        }
        return "transaction failed"
    case let error as PostgresStoreError:
        return error.message
    default:
        return "\(type(of: error))"
    }
}
