public import Logging
public import PostgresNIO

extension PostgresClient.Configuration {
    /// This configuration with server-side bounds on waiting: a statement never waits more than 5 s for a lock or
    /// 30 s in all, and a transaction left idle is ended after 30 s, so a stuck peer cannot hold a request forever.
    public var boundingWaits: PostgresClient.Configuration {
        var configuration = self
        configuration.options.additionalStartupParameters.append(contentsOf: [
            ("lock_timeout", "5s"), ("statement_timeout", "30s"), ("idle_in_transaction_session_timeout", "30s"),
        ])
        return configuration
    }
}

extension PostgresClient {
    /// A connection pool for a `postgres://` URL, with ``PostgresClient/Configuration/boundingWaits``, that logs at
    /// info and above only (postgres-nio's debug lines name every query). Run it (`run()`) in a task of its own;
    /// several stores of one process may share it.
    /// - Throws: ``PostgresURLError`` saying what to fix in the URL.
    public static func bounded(url: String, logger: Logger) throws(PostgresURLError) -> PostgresClient {
        PostgresClient(configuration: try PostgresURL(url).configuration.boundingWaits, backgroundLogger: quiet(logger))
    }

    /// `logger` at info or above.
    public static func quiet(_ logger: Logger) -> Logger {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .info)
        return quiet
    }
}
