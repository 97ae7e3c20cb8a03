import ControlTransport
import CribCallProtocol
import Synchronization

/// Sends one connection's messages in the order they were handed over, without making the caller wait, and never
/// holding more than ``limit`` of them.
///
/// The monitor produces messages for a connection from several places — a noise event, a media pipeline's offer
/// and candidates, the auto-stop timer — and some must arrive in order (NOISE_EVENT with its `autoStreamSessionId`
/// before that stream's WEBRTC_OFFER; START_STREAM_RESPONSE before the offer). A `Task` per message would not keep
/// that order; one writer per connection does.
///
/// A peer that stops reading makes the connection's sends wait (QUIC flow control): once ``limit`` messages wait
/// here, the connection is closed (INTERNAL_ERROR) and what waits is dropped, so no peer can grow the monitor's
/// memory. A replay (EVENTS_SINCE) is one entry, read from the event log a page at a time as it is sent.
final class Outbox: Sendable {
    /// A replay: the next page of messages after a `seq` (empty when caught up), and the `seq` of its last one.
    typealias ReplayPages = @Sendable (_ afterSeq: Int64) -> (messages: [ControlMessage], lastSeq: Int64)

    private enum Entry: Sendable {
        case message(ControlMessage)
        case replay(after: Int64, pages: ReplayPages)
    }

    /// The most entries that may wait for a connection that does not read.
    static let limit = 1024

    private let continuation: AsyncStream<Entry>.Continuation
    /// Entries handed over and not yet sent; nil once the connection was closed for not reading.
    private final class Waiting: Sendable {
        let count = Mutex<Int?>(0)
    }
    private let waiting = Waiting()
    private let connection: any ControlConnection

    /// Starts the writer for `connection`.
    init(connection: any ControlConnection) {
        let (entries, continuation) = AsyncStream.makeStream(of: Entry.self)
        self.continuation = continuation
        self.connection = connection
        let waiting = waiting
        Task {
            for await entry in entries {
                // Once the connection is closed every send fails at once: the rest is dropped, as it must be.
                switch entry {
                case .message(let message):
                    try? await connection.send(message)
                case .replay(let after, let pages):
                    var cursor = after
                    while true {
                        let page = pages(cursor)
                        guard !page.messages.isEmpty else { break }
                        for message in page.messages { try? await connection.send(message) }
                        cursor = page.lastSeq
                    }
                }
                waiting.count.withLock { count in count = count.map { $0 - 1 } }
            }
        }
    }

    /// Queues `message` after everything queued before it.
    func send(_ message: ControlMessage) {
        enqueue(.message(message))
    }

    /// Queues a replay of the event log after `afterSeq`, read page by page when its turn comes: what is queued
    /// after it is sent after the whole replay.
    func replay(after afterSeq: Int64, pages: @escaping ReplayPages) {
        enqueue(.replay(after: afterSeq, pages: pages))
    }

    private func enqueue(_ entry: Entry) {
        let accepted = waiting.count.withLock { count -> Bool? in
            guard let waiting = count else { return false }  // closed for not reading: dropped
            guard waiting < Self.limit else {
                count = nil
                return nil
            }
            count = waiting + 1
            return true
        }
        switch accepted {
        case true?:
            continuation.yield(entry)
        case false?:
            break
        case nil:
            continuation.finish()
            let connection = connection
            Task { await connection.close(.internalError) }
        }
    }

    /// Stops the writer once the queued messages are handed to the connection.
    func finish() {
        continuation.finish()
    }
}
