import ControlTransport
import CribCallProtocol

/// Sends one connection's messages in the order they were handed over, without making the caller wait.
///
/// The monitor produces messages for a connection from several places — a noise event, a media pipeline's offer
/// and candidates, the auto-stop timer — and some must arrive in order (NOISE_EVENT with its `autoStreamSessionId`
/// before that stream's WEBRTC_OFFER; START_STREAM_RESPONSE before the offer). A `Task` per message would not keep
/// that order; one writer per connection does.
final class Outbox: Sendable {
    private let continuation: AsyncStream<ControlMessage>.Continuation

    /// Starts the writer for `connection`.
    init(connection: any ControlConnection) {
        let (messages, continuation) = AsyncStream.makeStream(of: ControlMessage.self)
        self.continuation = continuation
        Task {
            for await message in messages {
                // Once the connection is closed every send fails at once: the rest is dropped, as it must be.
                try? await connection.send(message)
            }
        }
    }

    /// Queues `message` after everything queued before it.
    func send(_ message: ControlMessage) {
        continuation.yield(message)
    }

    /// Stops the writer once the queued messages are handed to the connection.
    func finish() {
        continuation.finish()
    }
}
