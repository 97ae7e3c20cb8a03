import BeMyEarsServer
import Testing

@Suite("--store parsing")
struct StoreLocationTests {
    @Test func memoryAndPostgres() throws {
        #expect(try StoreLocation(parsing: "memory") == .memory)
        #expect(
            try StoreLocation(parsing: "postgres://bme:pw@db.local:5432/bemyears")
                == .postgres("postgres://bme:pw@db.local:5432/bemyears")
        )
        #expect(
            try StoreLocation(parsing: "postgresql://localhost/bemyears")
                == .postgres("postgresql://localhost/bemyears"))
    }

    /// Wrong values are refused with the syntax, and never echo a password.
    @Test(arguments: ["", "mem", "mysql://u@h/db", "mysql://user:secretpw@h/db", "postgres:/x"])
    func refusedWithTheSyntax(_ text: String) {
        #expect {
            try StoreLocation(parsing: text)
        } throws: { error in
            let message = String(describing: error)
            return message.contains("memory or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
                && !message.contains("secretpw")
        }
    }
}
