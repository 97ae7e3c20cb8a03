import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A bare TCP connection to a loopback port, for tests of how a server treats clients that misbehave (send a
/// request a byte at a time, or open connections and say nothing). Its waits run on a thread of their own: blocking
/// the cooperative pool would starve an in-process server's request handling (two threads on two cores).
public final class RawTCP: @unchecked Sendable {
    private let socket: Int32

    /// Connects to 127.0.0.1:`port`.
    public init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawTCPError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            throw RawTCPError("connect to port \(port): errno \(errno)")
        }
    }

    deinit { Glibc.close(socket) }

    /// Sends `text`; false when the server has closed the connection.
    @discardableResult
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            == bytes.count
    }

    /// Slowloris: sends `head` (a request line and headers, no blank line), then one more header line every 200 ms,
    /// up to 60 (12 s and more: far past any head deadline a test sets, also on a loaded machine); `cut` is true
    /// when the server closed the connection meanwhile, `after` how long it took.
    public func trickle(head: String) async -> (cut: Bool, after: Duration) {
        let started = ContinuousClock.now
        guard send(head) else { return (true, .zero) }
        for index in 0..<60 {
            let sent = send("X-Trickle-\(index): a\r\n")
            let closed = await closedByServer(within: .milliseconds(200))
            if !sent || closed { return (true, ContinuousClock.now - started) }
        }
        return (false, ContinuousClock.now - started)
    }

    /// Waits up to `timeout` for the server to close the connection (reading and dropping what it sends); true when
    /// it did.
    public func closedByServer(within timeout: Duration) async -> Bool {
        await Self.offPool { self.waitClosed(within: timeout) }
    }

    /// What the server sends until it closes the connection, or until `timeout`.
    public func receiveUntilClosed(within timeout: Duration) async -> [UInt8] {
        await Self.offPool { self.blockingReceive(within: timeout) }
    }

    /// What the server answers to `request` (read until it stops sending for 300 ms, or `timeout`).
    public func exchange(_ request: String, timeout: Duration = .seconds(5)) async -> String {
        await Self.offPool { self.blockingExchange(request, timeout: timeout) }
    }

    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }

    private func waitClosed(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(
                max(1, min(100, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let read = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            if read <= 0 { return true }
        }
        return false
    }

    private func blockingReceive(within timeout: Duration) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let read = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            if read <= 0 { break }
            received += buffer[0..<read]
        }
        return received
    }

    private func blockingExchange(_ request: String, timeout: Duration) -> String {
        guard send(request) else { return "" }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, answer.isEmpty ? 100 : 300) > 0 else {
                if answer.isEmpty { continue } else { break }
            }
            let read = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            if read <= 0 { break }
            answer += buffer[0..<read]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

public struct RawTCPError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
