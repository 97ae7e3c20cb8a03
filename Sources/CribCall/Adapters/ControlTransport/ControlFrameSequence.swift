import CribCallProtocol
public import NIOCore
import Synchronization

/// The frames received on a control stream, as an `AsyncSequence` of payloads (see `ControlConnection.inbound`).
public struct ControlFrameSequence: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    public typealias Failure = any Error

    let queue: InboundFrameQueue

    public init(_ queue: InboundFrameQueue) {
        self.queue = queue
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(queue: queue)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let queue: InboundFrameQueue

        public mutating func next() async throws -> ByteBuffer? {
            try await queue.next()
        }
    }
}

/// Turns control-stream bytes into frames for one consumer, with backpressure.
///
/// The transport appends raw stream bytes as they arrive; the queue cuts them into frames (PROTOCOL.md §3). When
/// the consumer takes a frame, `onConsumed` reports its size (header included) so the transport can return that
/// much flow-control credit to the peer. Bytes the consumer has not taken yet therefore stay within the stream's
/// flow-control window: a fast peer cannot make us buffer without bound.
///
/// A framing violation is delivered after the frames before it, as a thrown `ControlProtocolError`.
public final class InboundFrameQueue: Sendable {
    private enum Terminal {
        case finished
        case failed(any Error)
    }

    private struct State: ~Copyable {
        var undecoded = ByteBuffer()
        var frames = CircularBuffer<ByteBuffer>()
        var waiter: CheckedContinuation<ByteBuffer?, any Error>?
        var terminal: Terminal?
        var framingFailed = false
    }

    private let state = Mutex(State())
    private let onConsumed: @Sendable (Int) -> Void

    /// - Parameter onConsumed: Called with the bytes of each frame as it is handed to the consumer — on the
    ///   consumer's task, or inside `append` when the consumer was already waiting. It must not block or take a
    ///   lock the producer holds while appending (the QUIC adapter hops to its event loop).
    public init(onConsumed: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.onConsumed = onConsumed
    }

    /// Producer: appends bytes received on the control stream.
    public func append(_ bytes: ByteBuffer) {
        let resume: (CheckedContinuation<ByteBuffer?, any Error>, Result<ByteBuffer?, any Error>)? = state.withLock {
            state in
            guard state.terminal == nil, !state.framingFailed else { return nil }
            var incoming = bytes
            state.undecoded.writeBuffer(&incoming)
            do {
                while let frame = try ControlFrame.decode(from: &state.undecoded) {
                    state.frames.append(frame)
                }
                state.undecoded.discardReadBytes()
            } catch {
                state.framingFailed = true
                state.terminal = .failed(error)
            }
            return Self.takeReady(&state)
        }
        if let (continuation, result) = resume { deliver(continuation, result) }
    }

    /// Producer: no more bytes will come. With an error, the consumer receives it after the pending frames.
    public func finish(throwing error: (any Error)? = nil) {
        let resume: (CheckedContinuation<ByteBuffer?, any Error>, Result<ByteBuffer?, any Error>)? = state.withLock {
            state in
            guard state.terminal == nil else { return nil }
            state.terminal = error.map { .failed($0) } ?? .finished
            return Self.takeReady(&state)
        }
        if let (continuation, result) = resume { deliver(continuation, result) }
    }

    /// Consumer: the next frame, nil at the end, or the terminal error.
    func next() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                let ready: Result<ByteBuffer?, any Error>? = state.withLock { state in
                    precondition(state.waiter == nil, "a control frame sequence has one consumer")
                    if let result = Self.nextResult(&state) { return result }
                    // Checked under the lock: a cancellation that came before the waiter is stored would otherwise
                    // find no waiter to wake, and this consumer would wait for the next frame.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { deliver(continuation, ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<ByteBuffer?, any Error>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func deliver(
        _ continuation: CheckedContinuation<ByteBuffer?, any Error>, _ result: Result<ByteBuffer?, any Error>
    ) {
        if case .success(let frame?) = result {
            onConsumed(frame.readableBytes + ControlFrame.headerLength)
        }
        continuation.resume(with: result)
    }

    /// What a waiting consumer can be given now, if anything.
    private static func nextResult(_ state: inout State) -> Result<ByteBuffer?, any Error>? {
        if let frame = state.frames.popFirst() { return .success(frame) }
        switch state.terminal {
        case .finished: return .success(nil)
        case .failed(let error): return .failure(error)
        case nil: return nil
        }
    }

    private static func takeReady(
        _ state: inout State
    ) -> (CheckedContinuation<ByteBuffer?, any Error>, Result<ByteBuffer?, any Error>)? {
        guard let waiter = state.waiter, let result = nextResult(&state) else { return nil }
        state.waiter = nil
        return (waiter, result)
    }
}
