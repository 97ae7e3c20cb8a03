import CDNSSD
import Dispatch
import Synchronization

/// The real discovery adapter: DNS-SD through the system daemon (Avahi's dns_sd compatibility library on Linux,
/// mDNSResponder on Apple platforms).
///
/// Every dns_sd call and callback runs on one private serial dispatch queue per instance; see
/// ``DNSServiceOperation`` for how refs are serviced and freed.
public final class DNSSDServiceDiscovery: ServiceAdvertiser, ServiceBrowser {
    /// The service types a monitor registers and a listener browses (PROTOCOL.md §10).
    public static let serviceTypes = ["_baby-monitor._udp", "_baby-monitor._tcp"]

    /// The DNS-SD domain. Avahi's compat layer needs it spelled out.
    static let domain = "local."

    /// How long a registration may take before it is reported as failed.
    static let registrationTimeout: Duration = .seconds(20)

    let queue = DispatchQueue(label: "ServiceDiscovery.DNSSD")
    private let lostGracePeriod: Duration

    /// Creates the adapter. Nothing talks to the daemon until the first advertise or browse.
    ///
    /// - Parameter lostGracePeriod: How long a browser waits before reporting a vanished monitor as lost; a
    ///   monitor that reappears within it (e.g. renamed: new instance name) is reported as updated instead.
    public init(lostGracePeriod: Duration = .seconds(3)) {
        self.lostGracePeriod = lostGracePeriod
    }

    public func advertise(
        _ advertisement: MonitorAdvertisement
    ) async throws(ServiceDiscoveryError) -> any AdvertisementHandle {
        let handle = DNSSDAdvertisement(queue: queue)
        try await handle.register(advertisement)
        return handle
    }

    public func browse() -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DiscoveryEvent, any Error>.makeStream()
        let session = DNSSDBrowseSession(queue: queue, lostGrace: lostGracePeriod, continuation: continuation)
        continuation.onTermination = { [queue] _ in
            queue.async { session.stop() }
        }
        queue.async { session.start() }
        return stream
    }

    private static let prepared = Mutex(false)

    /// Sets AVAHI_COMPAT_NOWARN=1 once, before the first dns_sd call, so Avahi's compat warning is not printed.
    static func prepareLibrary() {
        prepared.withLock { prepared in
            guard !prepared else { return }
            cdnssd_silence_avahi_compat_warning()
            prepared = true
        }
    }
}
