import ArgusStore
import ArgusTestSupport
import Foundation
import Testing

@Suite("Events: newest first, pages that new events do not shift")
struct EventStoreTests {
    @Test("paging as of the first page's sequence number is stable while events arrive")
    func stablePages() throws {
        let database = try ArgusDatabase.inMemory()
        let camera = try database.camera(source: "test", name: "Test pattern", sourceType: "test")
        var at = ArgusFixtures.epoch
        for index in 0..<25 {
            at = at.addingTimeInterval(1)
            try database.addEvent(
                cameraId: camera.id, description: "Motion \(index)", smartDetectionType: "motion", confidence: nil,
                thumbnail: Data([0xFF, 0xD8, UInt8(index)]), at: at)
        }
        let first = try database.events(page: 1, limit: 10, asOf: nil)
        #expect(first.total == 25 && first.events.first?.description == "Motion 24")
        for index in 25..<30 {
            at = at.addingTimeInterval(1)
            try database.addEvent(
                cameraId: camera.id, description: "Motion \(index)", smartDetectionType: "motion", confidence: nil,
                thumbnail: nil, at: at)
        }
        let second = try database.events(page: 2, limit: 10, asOf: first.asOf)
        let third = try database.events(page: 3, limit: 10, asOf: first.asOf)
        let seen = (first.events + second.events + third.events).map(\.description)
        #expect(seen == (0..<25).reversed().map { "Motion \($0)" }, "every event once, in order")
        #expect(try database.events(page: 1, limit: 10, asOf: nil).total == 30)
        #expect(try database.recentEvents(limit: 3).map(\.description) == ["Motion 29", "Motion 28", "Motion 27"])
        let event = try #require(first.events.first)
        #expect(event.cameraName == "Test pattern" && event.hasThumbnail)
        #expect(try database.thumbnail(eventId: event.id) == Data([0xFF, 0xD8, 24]))
        #expect(try database.camera(source: "test", name: "Porch", sourceType: "test").id == camera.id, "stable id")
        #expect(try database.cameras().first?.lastEventAt == at)
        #expect(try database.pruneEvents(before: ArgusFixtures.epoch.addingTimeInterval(11)) == 10)
    }

    @Test("a thumbnail that comes later is set once, never over one already there, and not for a pruned event")
    func lateThumbnail() throws {
        let database = try ArgusDatabase.inMemory()
        let camera = try database.camera(source: "cribcall:m1", name: "Nursery", sourceType: "cribcall")
        let event = try database.addEvent(
            cameraId: camera.id, description: "Noise detected", smartDetectionType: "noise", confidence: nil,
            thumbnail: nil, at: ArgusFixtures.epoch)
        #expect(!event.hasThumbnail)
        #expect(try database.thumbnail(eventId: event.id) == nil)
        #expect(try database.setThumbnail(eventId: event.id, Data([0xFF, 0xD8, 1])))
        #expect(!(try database.setThumbnail(eventId: event.id, Data([0xFF, 0xD8, 2]))), "the first picture stays")
        #expect(try database.thumbnail(eventId: event.id) == Data([0xFF, 0xD8, 1]))
        #expect(try database.event(event.id)?.hasThumbnail == true)
        try database.pruneEvents(before: ArgusFixtures.epoch.addingTimeInterval(1))
        #expect(!(try database.setThumbnail(eventId: event.id, Data([0xFF, 0xD8, 3]))))
    }
}
