import BeMyEarsCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// One WebSocket at `/ws`, between its socket and the hub: a reader that hands each text message to
/// ``SignalingHub/receive(_:from:)`` in arrival order, and a writer that drains the session's ``SessionOutbox``.
///
/// Sizes: the protocol's limit is 65,536 bytes per message. Messages up to twice that are read and given to the
/// hub, which answers ERROR PROTOCOL_ERROR and closes 1009; anything larger (one frame or fragments) is refused
/// by the WebSocket layer itself with close 1009, without reading it into memory.
struct SignalingConnection: Sendable {
    let hub: SignalingHub
    let sessions: WebSocketOutbound
    /// Unwritten bytes allowed per socket (1 MiB); see ``SessionOutbox`` for the other bound, on stalled writes.
    let maximumOutboundBytes: Int
    /// How long a client gets to answer our close frame before the connection is dropped.
    let closeGrace: TimeAmount
    let logger: Logger

    /// The largest message read at all (frames and reassembled messages); see the type's documentation.
    static func readLimit(for configuration: SignalingConfiguration) -> Int {
        2 * configuration.maximumMessageBytes
    }

    func run(
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter,
        channel: any Channel,
        readLimit: Int
    ) async throws {
        let session = SessionID.random()
        let logger = logger
        let outbox = SessionOutbox(limit: maximumOutboundBytes) { reason in
            // The client does not read: drop the TCP connection (a close frame could not reach it anyway).
            logger.notice("event=session_dropped reason=\(reason.rawValue) sessionId=\(session)")
            channel.close(promise: nil)
        }
        sessions.attach(outbox, for: session)
        await hub.connect(session)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await Self.write(outbox, to: outbound, channel: channel, closeGrace: closeGrace) }
            var failure: (any Error)?
            do {
                var isClosing = false
                for try await message in inbound.messages(maxSize: readLimit) where !isClosing {
                    switch message {
                    case .text(let text):
                        await hub.receive(text, from: session)
                    case .binary:
                        // Not part of the protocol (text frames only): answered like a frame that is not JSON.
                        isClosing = true
                        outbox.enqueue(
                            EnvelopeCodec.encode(
                                .error(
                                    SignalingError(
                                        code: .protocolError,
                                        message: "Binary frames are not part of the protocol; send one JSON object "
                                            + "per text frame."
                                    )
                                )
                            )
                        )
                        outbox.close(.protocolError)
                        await hub.disconnect(session)
                    }
                }
            } catch {
                // E.g. a message over the read limit: rethrown below so the WebSocket closes with its code (1009).
                failure = error
            }
            await hub.disconnect(session)
            sessions.detach(session)
            try await group.waitForAll()
            if let failure { throw failure }
        }
    }

    /// Writes the outbox to the socket until it finishes.
    private static func write(
        _ outbox: SessionOutbox,
        to outbound: WebSocketOutboundWriter,
        channel: any Channel,
        closeGrace: TimeAmount
    ) async {
        for await item in outbox.items {
            switch item {
            case .text(let text):
                // The write suspends while the channel is not writable (the client is not reading); the
                // server's stall sweep (WebSocketOutbound.dropStalled) drops the connection when that lasts too long.
                outbox.willWrite(at: .now)
                do {
                    try await outbound.write(.text(text))
                } catch {
                    channel.close(promise: nil)
                    return
                }
                outbox.didWrite(text.utf8.count)
            case .close(let code):
                channel.eventLoop.scheduleTask(in: closeGrace) { channel.close(promise: nil) }
                try? await outbound.close(WebSocketErrorCode(codeNumber: Int(code.rawValue)), reason: nil)
            }
        }
    }
}
