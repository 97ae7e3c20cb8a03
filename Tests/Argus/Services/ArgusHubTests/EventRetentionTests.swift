import ArgusHub
import ArgusStore
import ArgusTestSupport
import Foundation
import Logging
import Testing

@Suite("Events are kept 30 days, pruned at most once an hour")
struct EventRetentionTests {
    @Test("the first call prunes; the next within the hour does not; an hour later it does")
    func hourly() throws {
        let database = try ArgusDatabase.inMemory()
        let camera = try database.monitorCamera(source: "cribcall:m1", name: "Nursery")
        let now = ArgusFixtures.epoch.addingTimeInterval(90 * 86_400)
        func addOld() throws {
            try database.addEvent(
                cameraId: camera.id, description: "Noise detected", smartDetectionType: "noise", confidence: nil,
                thumbnail: nil, at: now.addingTimeInterval(-31 * 86_400))
        }
        try database.addEvent(
            cameraId: camera.id, description: "Recent", smartDetectionType: "noise", confidence: nil, thumbnail: nil,
            at: now.addingTimeInterval(-86_400))
        try addOld()
        let retention = EventRetention(database: database, logger: Logger(label: "test"))
        retention.pruneIfDue(now: now)
        #expect(try database.events(page: 1, limit: 10, asOf: nil).events.map(\.description) == ["Recent"])
        try addOld()
        retention.pruneIfDue(now: now.addingTimeInterval(1800))
        #expect(try database.events(page: 1, limit: 10, asOf: nil).total == 2, "not again within the hour")
        retention.pruneIfDue(now: now.addingTimeInterval(3600))
        #expect(try database.events(page: 1, limit: 10, asOf: nil).total == 1)
    }
}
