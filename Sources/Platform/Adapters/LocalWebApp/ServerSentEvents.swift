import HTTPTypes
public import Hummingbird
import NIOCore

/// One Server-Sent Event (the `text/event-stream` format of the HTML standard): a name and one line of data.
public struct ServerSentEvent: Sendable, Hashable {
    public var name: String
    /// One line (JSON has no raw newline); newlines would split the data into several `data:` lines.
    public var data: String

    public init(name: String, data: String) {
        self.name = name
        self.data = data
    }

    /// The event on the wire.
    public var encoded: ByteBuffer {
        var text = "event: \(name)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line)\n"
        }
        return ByteBuffer(string: text + "\n")
    }

    /// A comment line: keeps idle connections (and proxies) from timing out, shows nothing to the page.
    public static let keepAlive = ByteBuffer(string: ": keep-alive\n\n")

    /// A streaming response of `events`, with a comment every `keepAliveInterval` while nothing else is sent; the
    /// stream ends when `events` does or the browser goes away.
    public static func response(
        _ events: AsyncStream<ServerSentEvent>, keepAliveInterval: Duration = .seconds(15)
    ) -> Response {
        let (bytes, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(64))
        let pump = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events { continuation.yield(event.encoded) }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: keepAliveInterval)
                        continuation.yield(keepAlive)
                    }
                }
                await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody(asyncSequence: bytes))
    }
}
