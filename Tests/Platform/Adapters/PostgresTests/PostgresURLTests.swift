import Postgres
import PostgresNIO
import Testing

/// `postgres://` URLs, parsed without a database.
@Suite("PostgreSQL URLs")
struct PostgresURLTests {
    @Test("host, port, user, password, database and sslmode from a TCP URL")
    func tcp() throws {
        let url = try PostgresURL("postgres://bemyears:s%40cret@db.example.net:6543/signaling?sslmode=require")
        #expect(url.endpoint == .tcp(host: "db.example.net", port: 6543))
        #expect(url.user == "bemyears")
        #expect(url.password == "s@cret")
        #expect(url.database == "signaling")
        #expect(url.tls == .require)
    }

    @Test("defaults: localhost, 5432, user postgres, database = user (nil), TLS preferred")
    func defaults() throws {
        let url = try PostgresURL("postgresql://", environment: [:])
        #expect(url.endpoint == .tcp(host: "localhost", port: 5432))
        #expect(url.user == "postgres")
        #expect(url.password == nil)
        #expect(url.database == nil)
        #expect(url.tls == .prefer)
    }

    @Test("PGPASSWORD gives the password a URL leaves out (libpq's rule), so it need not be on a command line")
    func passwordFromEnvironment() throws {
        let environment = ["PGPASSWORD": "from-env"]
        #expect(try PostgresURL("postgres://app@db/signaling", environment: environment).password == "from-env")
        #expect(try PostgresURL("postgres://app:in-url@db/signaling", environment: environment).password == "in-url")
        #expect(try PostgresURL("postgres://app@db/signaling", environment: [:]).password == nil)
    }

    @Test("a Unix socket directory, percent-encoded in the authority or as ?host=")
    func unixSocket() throws {
        let encoded = try PostgresURL("postgres://postgres@%2Fvar%2Frun%2Fpostgresql:5433/db")
        #expect(encoded.endpoint == .unixSocket(path: "/var/run/postgresql/.s.PGSQL.5433"))
        #expect(encoded.database == "db")
        let parameter = try PostgresURL("postgres:///db?host=/tmp/pg&sslmode=disable")
        #expect(parameter.endpoint == .unixSocket(path: "/tmp/pg/.s.PGSQL.5432"))
        #expect(parameter.tls == .disable)
    }

    @Test("an IPv6 literal host")
    func ipv6() throws {
        #expect(try PostgresURL("postgres://u@[::1]:5432/db").endpoint == .tcp(host: "::1", port: 5432))
    }

    @Test(
        "unusable URLs are refused with a message saying what to fix",
        arguments: [
            "mysql://u@h/db", "postgres://u@h:99999/db", "postgres://u@h/db?sslmode=sometimes",
            "postgres://u@h/db?connect_timeout=3", "postgres://u@h/a/b", "not a url at all",
            "postgres:///db?host=/tmp&sslmode=require",
        ]
    )
    func refused(text: String) {
        #expect {
            _ = try PostgresURL(text)
        } throws: { error in
            guard let error = error as? PostgresURLError else { return false }
            return error.message.contains("postgres://")
        }
    }

    @Test("a bounded pool asks the server to end long waits: locks 5 s, statements 30 s, idle transactions 30 s")
    func boundedWaits() throws {
        let configuration = try PostgresURL("postgres://u@h/db?application_name=toukan").configuration.boundingWaits
        let parameters = Dictionary(
            configuration.options.additionalStartupParameters.map { ($0.0, $0.1) }, uniquingKeysWith: { $1 })
        #expect(parameters["lock_timeout"] == "5s")
        #expect(parameters["statement_timeout"] == "30s")
        #expect(parameters["idle_in_transaction_session_timeout"] == "30s")
        #expect(parameters["application_name"] == "toukan", "what the URL asked for is kept")
    }
}
