import Testing
import ToukanServer

/// `toukan-server`'s options refused with a sentence that names the option and what it needs.
@Suite("toukan-server options")
struct OptionsTests {
    static func refusal(_ change: (inout ToukanServerOptions) -> Void) -> String? {
        var options = ToukanServerOptions()
        change(&options)
        do {
            try options.validate()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultsAndAUsableDatabaseAreAccepted() {
        #expect(Self.refusal { _ in } == nil)
        #expect(Self.refusal { $0.database = "postgres://toukan@db.local:5432/toukan" } == nil)
        #expect(Self.refusal { $0.port = 0 } == nil)
    }

    @Test func refusalsSayWhatToPass() {
        #expect(Self.refusal { $0.port = 70_000 }?.hasPrefix("--port must be 0...65535") == true)
        #expect(Self.refusal { $0.workers = 100 }?.hasPrefix("--workers must be 0...64") == true)
        #expect(Self.refusal { $0.maximumUploadBytes = 0 }?.hasPrefix("--max-upload-bytes") == true)
        let database = Self.refusal { $0.database = "mysql://toukan@db/toukan" }
        #expect(database?.hasPrefix("--database: ") == true, "\(database ?? "accepted")")
        #expect(database?.contains("postgres://") == true, "\(database ?? "accepted")")
        #expect(Self.refusal { $0.database = "postgres://u@h:99999/db" }?.hasPrefix("--database: ") == true)
    }
}
