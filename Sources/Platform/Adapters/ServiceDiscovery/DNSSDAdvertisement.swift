import CDNSSD
import Dispatch

/// An advertisement registered under each of its service types through dns_sd.
final class DNSSDAdvertisement: AdvertisementHandle, @unchecked Sendable {
    // Safe: `registrations`, `current` and `pending` are only read and written on `queue` (the public methods hop
    // onto it); `queue` is immutable.
    private let queue: DispatchQueue
    private var registrations: [DNSServiceOperation] = []
    private var current: ServiceAdvertisement?
    /// Registrations still waiting for their first callback, and who waits for them.
    private var pending: (remaining: Int, continuation: CheckedContinuation<ServiceDiscoveryError?, Never>)?

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Registers every type and waits until the daemon confirms (or refuses) them.
    func register(_ advertisement: ServiceAdvertisement) async throws(ServiceDiscoveryError) {
        let txt = try advertisement.validatedTXT()
        let error: ServiceDiscoveryError? = await withCheckedContinuation { continuation in
            queue.async { self.startRegistrations(advertisement, txt: txt, continuation) }
        }
        if let error {
            await cancel()
            throw error
        }
    }

    private func startRegistrations(
        _ advertisement: ServiceAdvertisement,
        txt: [UInt8],
        _ continuation: CheckedContinuation<ServiceDiscoveryError?, Never>
    ) {
        for operation in registrations { operation.cancel() }
        registrations = []
        current = advertisement
        pending = (advertisement.types.count, continuation)
        for serviceType in advertisement.types {
            let context = DNSSDCallbackContext { [weak self] reply in self?.handle(reply) }
            let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
                txt.withUnsafeBytes { buffer in
                    DNSServiceRegister(
                        ref, 0, 0, advertisement.name, serviceType, DNSSDServiceDiscovery.domain, nil,
                        UInt16(advertisement.port).bigEndian, UInt16(buffer.count), buffer.baseAddress,
                        DNSSDCallbacks.register, context
                    )
                }
            }
            switch result {
            case .success(let operation):
                registrations.append(operation)
            case .failure(let error):
                finishPending(error.publicError(.registrationFailed, "register \(serviceType)"))
                return
            }
        }
        let timeout = Int(DNSSDServiceDiscovery.registrationTimeout.components.seconds)
        queue.asyncAfter(deadline: .now() + .seconds(timeout)) { [weak self] in
            self?.finishPending(
                ServiceDiscoveryError(
                    code: .registrationFailed,
                    message:
                        "the mDNS daemon did not confirm the registration in time: check `systemctl status avahi-daemon`"
                ))
        }
    }

    private func handle(_ reply: DNSSDReply) {
        switch reply {
        case .registered(_, let error) where error == cdnssd_no_error():
            guard let pending else { return }
            if pending.remaining <= 1 {
                finishPending(nil)
            } else {
                self.pending = (pending.remaining - 1, pending.continuation)
            }
        case .registered(_, let error):
            finishPending(DNSSDCallError(code: error).publicError(.registrationFailed, "register"))
        case .failed(let error):
            finishPending(error.publicError(.registrationFailed, "register"))
        default:
            break
        }
    }

    private func finishPending(_ error: ServiceDiscoveryError?) {
        guard let pending else { return }
        self.pending = nil
        pending.continuation.resume(returning: error)
    }

    func update(_ advertisement: ServiceAdvertisement) async throws(ServiceDiscoveryError) {
        let txt = try advertisement.validatedTXT()
        let needsRegistration: Bool = await withCheckedContinuation { continuation in
            queue.async {
                guard let current = self.current, current.name == advertisement.name,
                    current.types == advertisement.types, current.port == advertisement.port
                else {
                    continuation.resume(returning: true)
                    return
                }
                for operation in self.registrations {
                    if operation.updatePrimaryTXT(txt) != nil {
                        continuation.resume(returning: true)
                        return
                    }
                }
                self.current = advertisement
                continuation.resume(returning: false)
            }
        }
        if needsRegistration {
            // A new instance name (or port, or types) needs new SRV/PTR records: withdraw and register again.
            try await register(advertisement)
        }
    }

    func cancel() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                for operation in self.registrations { operation.cancel() }
                self.registrations = []
                self.current = nil
                self.finishPending(nil)
                continuation.resume()
            }
        }
    }
}
