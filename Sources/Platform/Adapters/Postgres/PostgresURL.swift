public import Foundation
public import PostgresNIO

/// A `postgres://` URL as libpq and most tools write it, turned into a postgres-nio client configuration.
///
/// `postgres[ql]://[user[:password]@][host][:port][/database][?param=value&…]`, with the parameters `sslmode`
/// (`disable`, `prefer`, `require`; also libpq's `allow`, `verify-ca`, `verify-full`, mapped to the nearest) and
/// `host` (overrides the authority's host). A host beginning with `/` is the directory of a Unix socket
/// (`<dir>/.s.PGSQL.<port>`); in the authority it must be percent-encoded (`postgres://u@%2Frun%2Fpostgresql/db`).
public struct PostgresURL: Sendable, Hashable {
    public static let defaultPort = 5432
    public static let defaultUser = "postgres"

    /// Where the server is.
    public enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        /// The socket file: `<directory>/.s.PGSQL.<port>`.
        case unixSocket(path: String)
    }

    public enum TLSMode: String, Sendable, Hashable {
        case disable, prefer, require
    }

    public var endpoint: Endpoint
    public var user: String
    public var password: String?
    public var database: String?
    public var tls: TLSMode
    public var applicationName: String?

    /// The postgres-nio client configuration for this URL.
    public var configuration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS
            switch self.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(.makeClientConfiguration())
            case .require: tls = .require(.makeClientConfiguration())
            }
            configuration = PostgresClient.Configuration(
                host: host,
                port: port,
                username: user,
                password: password,
                database: database,
                tls: tls
            )
        case .unixSocket(let path):
            configuration = PostgresClient.Configuration(
                unixSocketPath: path,
                username: user,
                password: password,
                database: database
            )
            configuration.tls = .disable
        }
        if let applicationName {
            configuration.options.additionalStartupParameters.append(("application_name", applicationName))
        }
        return configuration
    }

    /// - Throws: ``PostgresURLError`` saying what to fix.
    /// - Parameter environment: Where `PGPASSWORD` is looked up when the URL has no password (libpq's rule), so the
    ///   password need not be on a command line that every user can read (`/proc/PID/cmdline`).
    public init(
        _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(PostgresURLError) {
        guard text.utf8.count <= 4096 else { throw Self.invalid("it is longer than 4096 bytes") }
        guard let components = URLComponents(string: text) else {
            throw Self.invalid("it is not a URL (special characters in the password must be percent-encoded)")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw Self.invalid("it must start with postgres:// or postgresql://")
        }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] {
            parameters[item.name] = item.value ?? ""
        }
        let known: Set = ["sslmode", "host", "port", "user", "password", "dbname", "application_name"]
        if let unknown = parameters.keys.sorted().first(where: { !known.contains($0) }) {
            let list = known.sorted().joined(separator: ", ")
            throw Self.invalid("the parameter \"\(unknown)\" is not supported (known: \(list))")
        }

        var host = parameters["host"] ?? components.percentEncodedHost.flatMap { $0.removingPercentEncoding } ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }  // IPv6 literal
        let port: Int
        if let text = parameters["port"] {
            guard let value = Int(text), (1...65_535).contains(value) else {
                throw Self.invalid("the port \"\(text)\" is not a number from 1 to 65535")
            }
            port = value
        } else {
            port = components.port ?? Self.defaultPort
        }
        guard (1...65_535).contains(port) else { throw Self.invalid("the port \(port) is not from 1 to 65535") }
        let user = parameters["user"] ?? components.user.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultUser
        let password = parameters["password"] ?? components.password ?? environment["PGPASSWORD"]
        var path = components.path
        if path.hasPrefix("/") { path.removeFirst() }
        if path.contains("/") { throw Self.invalid("the database name \"\(path)\" contains a '/'") }
        let database = parameters["dbname"] ?? (path.isEmpty ? nil : path)

        let sslmode = parameters["sslmode"] ?? "prefer"
        switch sslmode {
        case "disable", "allow": tls = .disable
        case "prefer": tls = .prefer
        case "require", "verify-ca", "verify-full": tls = .require
        default: throw Self.invalid("sslmode \"\(sslmode)\" is not one of disable, prefer, require")
        }
        if host.hasPrefix("/") {
            guard tls != .require else { throw Self.invalid("sslmode \(sslmode) cannot be used over a Unix socket") }
            endpoint = .unixSocket(path: "\(host)/.s.PGSQL.\(port)")
        } else {
            endpoint = .tcp(host: host.isEmpty ? "localhost" : host, port: port)
        }
        self.user = user
        self.password = password
        self.database = database
        self.applicationName = parameters["application_name"]
    }

    private static func invalid(_ problem: String) -> PostgresURLError {
        PostgresURLError(
            message: "The database URL cannot be used: \(problem). Expected "
                + "postgres://user:password@host:5432/database (or ?host=/run/postgresql for a Unix socket)."
        )
    }
}

/// A `postgres://` URL that cannot be used; the message says what to fix.
public struct PostgresURLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public var description: String { message }
}
