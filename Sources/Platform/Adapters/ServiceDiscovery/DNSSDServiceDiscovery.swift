import CDNSSD
import Dispatch
import Synchronization

/// The real discovery adapter: DNS-SD through the system daemon (Avahi's dns_sd compatibility library on Linux,
/// mDNSResponder on Apple platforms).
///
/// Every dns_sd call and callback runs on one private serial dispatch queue per instance; see
/// ``DNSServiceOperation`` for how refs are serviced and freed.
public final class DNSSDServiceDiscovery: ServiceAdvertiser, ServiceBrowser {
    /// The DNS-SD domain. Avahi's compat layer needs it spelled out.
    static let domain = "local."

    /// How long a registration may take before it is reported as failed.
    static let registrationTimeout: Duration = .seconds(20)

    let queue = DispatchQueue(label: "ServiceDiscovery.DNSSD")

    /// Creates the adapter. Nothing talks to the daemon until the first advertise or browse.
    public init() {}

    public func advertise(
        _ advertisement: ServiceAdvertisement
    ) async throws(ServiceDiscoveryError) -> any AdvertisementHandle {
        let handle = DNSSDAdvertisement(queue: queue)
        try await handle.register(advertisement)
        return handle
    }

    public func browse(_ types: [String]) -> AsyncThrowingStream<[ServiceInstance], any Error> {
        let (stream, continuation) = AsyncThrowingStream<[ServiceInstance], any Error>.makeStream()
        let session = DNSSDBrowseSession(queue: queue, types: types, continuation: continuation)
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
