import CNetlink
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the kernel's links and routes through rtnetlink (`RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE`):
/// the kernel tells us, nothing is polled. ``changes`` yields an event whenever connectivity may have changed;
/// ``isOnline()`` judges it (a default route whose link is up).
///
/// The socket is subscribed when the watch is made, so nothing that happens after `init` is missed. One thread
/// blocks in `poll` on it and on a wake-up pipe; ``stop()`` (or ending the stream, or releasing the watch) ends the
/// thread, which closes the descriptors.
public final class NetworkWatch: Sendable {
    /// Yields what the kernel reports, newest kept if the consumer falls behind (one event says "look again").
    public let changes: AsyncStream<NetworkChange>

    private let control: Control

    /// What the watch and its thread share: whether the thread still runs, and the pipe that wakes it.
    private final class Control: Sendable {
        enum State {
            case running
            case stopping
            case finished
        }

        let state = Mutex(State.running)
        /// The pipe's write end; closed by the thread when it finishes, after which nobody writes to it.
        let wakeUp: Int32

        init(wakeUp: Int32) {
            self.wakeUp = wakeUp
        }
    }

    /// Subscribes to link and route changes and starts the watching thread.
    /// - Throws: ``NetworkWatchError`` when the netlink socket cannot be opened (no Linux, or a sandbox forbids it).
    public init() throws(NetworkWatchError) {
        let socket = try NetlinkSocket(groups: cnetlink_groups_link_and_routes)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw NetlinkSocket.error("pipe") }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (stream, continuation) = AsyncStream.makeStream(
            of: NetworkChange.self, bufferingPolicy: .bufferingNewest(64))
        changes = stream
        let control = Control(wakeUp: pipeEnds[1])
        self.control = control
        let readEnd = pipeEnds[0]
        let thread = Thread {
            Self.watch(socket, wakeUp: readEnd, continuation: continuation)
            continuation.finish()
            control.state.withLock { state in
                state = .finished
                close(readEnd)
                close(control.wakeUp)
            }
        }
        thread.name = "NetworkWatch"
        thread.start()
        continuation.onTermination = { [weak self] _ in self?.stop() }
    }

    deinit {
        stop()
    }

    /// Stops watching: the stream ends.
    public func stop() {
        control.state.withLock { state in
            guard case .running = state else { return }
            state = .stopping
            var byte: UInt8 = 1
            _ = write(control.wakeUp, &byte, 1)
        }
    }

    /// Whether the uploads can go out: a default route exists and its link is up. Asks the kernel now.
    /// - Throws: ``NetworkWatchError`` when the routing table cannot be read.
    public static func isOnline() throws(NetworkWatchError) -> Bool {
        try RoutingTable.read().isOnline
    }

    /// The thread's loop: until the pipe is written to or the socket fails.
    private static func watch(
        _ socket: NetlinkSocket, wakeUp: Int32, continuation: AsyncStream<NetworkChange>.Continuation
    ) {
        var descriptors = [
            pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, descriptors[1].revents == 0 else { return }
            guard descriptors[0].revents & Int16(POLLIN) != 0 else { return }
            do {
                guard let datagram = try socket.receive() else {
                    continuation.yield(.unknown)
                    continue
                }
                for message in NetlinkMessage.split(datagram) {
                    switch Int(message.type) {
                    case RTM_NEWLINK, RTM_DELLINK:
                        let index =
                            message.payload.count >= MemoryLayout<ifinfomsg>.size
                            ? message.payload.load(ifinfomsg.self, at: 0).ifi_index : 0
                        continuation.yield(.link(index: index))
                    case RTM_NEWROUTE, RTM_DELROUTE:
                        continuation.yield(.route)
                    default:
                        break
                    }
                }
            } catch {
                return
            }
        }
    }
}
