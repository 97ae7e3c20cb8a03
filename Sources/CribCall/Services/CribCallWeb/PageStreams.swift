import Foundation
import LocalWebApp
import Synchronization

/// The event streams of the app's open pages: each page gets every event sent after it opened (the newest 64 kept
/// when it reads slowly).
final class PageStreams: Sendable {
    private let pages = Mutex<[UUID: AsyncStream<ServerSentEvent>.Continuation]>([:])

    /// A new page's stream, starting with `first`; `closed` is called when the page goes away.
    func open(first: ServerSentEvent, closed: @escaping @Sendable (_ remaining: Int) -> Void) -> AsyncStream<
        ServerSentEvent
    > {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ServerSentEvent.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        continuation.yield(first)
        pages.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let remaining = self.pages.withLock { pages in
                pages[id] = nil
                return pages.count
            }
            closed(remaining)
        }
        return stream
    }

    /// Sends `event` to every open page.
    func send(_ event: ServerSentEvent) {
        for page in pages.withLock({ Array($0.values) }) { page.yield(event) }
    }

    var count: Int { pages.withLock { $0.count } }

    /// Ends every page's stream.
    func closeAll() {
        let all = pages.withLock { pages in
            defer { pages = [:] }
            return Array(pages.values)
        }
        for page in all { page.finish() }
    }
}
