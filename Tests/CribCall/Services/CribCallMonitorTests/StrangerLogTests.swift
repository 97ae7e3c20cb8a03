import Testing

@testable import CribCallMonitor

struct StrangerLogTests {
    @Test("the first stranger of a window is reported, the rest counted and summed up once the window has passed")
    func windows() {
        var log = StrangerLog(window: .seconds(10))
        let start = ContinuousClock.now
        var reported: [Bool] = []
        var summaries: [Int?] = [log.summary(at: start)]
        for second in [0, 1, 9] { reported.append(log.connected(at: start + .seconds(second))) }
        summaries.append(log.summary(at: start + .seconds(9)))  // not before the window ends
        let end = log.windowEnd
        summaries.append(log.summary(at: start + .seconds(10)))
        summaries.append(log.summary(at: start + .seconds(11)))  // summed up once
        // The next stranger opens a new window and is reported again; a lone one needs no summary.
        reported.append(log.connected(at: start + .seconds(30)))
        summaries.append(log.summary(at: start + .seconds(45)))
        #expect(reported == [true, false, false, true])
        #expect(summaries == [nil, nil, 2, nil, nil])
        #expect(end == start + .seconds(10))
    }
}
