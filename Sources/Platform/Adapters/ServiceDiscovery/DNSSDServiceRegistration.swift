import CDNSSD
import Dispatch

/// One DNS-SD service of any type (e.g. BeMyEars' `_bemyears._tcp`) registered through the system daemon, until
/// ``cancel()``. CribCall's monitors use ``DNSSDServiceDiscovery/advertise(_:)`` instead, which registers their two
/// service types with their TXT record.
public final class DNSSDServiceRegistration: @unchecked Sendable {
    // Safe: `operation` and `pending` are only read and written on `queue` (the public methods hop onto it);
    // `queue` is immutable.
    private let queue = DispatchQueue(label: "ServiceDiscovery.DNSSDServiceRegistration")
    private var operation: DNSServiceOperation?
    private var pending: CheckedContinuation<ServiceDiscoveryError?, Never>?

    private init() {}

    /// Registers `name` as an instance of `type` in `local.` on `port`, and waits until the daemon confirms it.
    ///
    /// - Parameters:
    ///   - name: The instance name (1–63 bytes).
    ///   - type: The service type, e.g. `_bemyears._tcp`.
    ///   - port: The port the service listens on.
    ///   - txt: TXT entries (`key=value`, each at most 255 bytes), in this order.
    /// - Throws: ``ServiceDiscoveryError`` (`daemonNotRunning` when there is no mDNS daemon).
    public static func register(
        name: String,
        type: String,
        port: Int,
        txt: [(key: String, value: String)] = []
    ) async throws(ServiceDiscoveryError) -> DNSSDServiceRegistration {
        guard (1...65_535).contains(port) else {
            throw ServiceDiscoveryError(
                code: .invalidAdvertisement, message: "port \(port) is not valid: use 1...65535")
        }
        guard !name.isEmpty, name.utf8.count <= 63 else {
            throw ServiceDiscoveryError(
                code: .invalidAdvertisement,
                message: "the instance name must be 1 to 63 bytes: shorten it"
            )
        }
        var record: [UInt8] = []
        for (key, value) in txt {
            let entry = Array("\(key)=\(value)".utf8)
            guard entry.count <= 255 else {
                throw ServiceDiscoveryError(
                    code: .invalidAdvertisement,
                    message: "the TXT entry \(key) is \(entry.count) bytes; DNS-SD allows 255: shorten it"
                )
            }
            record.append(UInt8(entry.count))
            record.append(contentsOf: entry)
        }
        let registration = DNSSDServiceRegistration()
        let txtRecord = record
        let error: ServiceDiscoveryError? = await withCheckedContinuation { continuation in
            registration.queue.async {
                registration.start(name: name, type: type, port: port, txt: txtRecord, continuation)
            }
        }
        if let error {
            await registration.cancel()
            throw error
        }
        return registration
    }

    private func start(
        name: String,
        type: String,
        port: Int,
        txt: [UInt8],
        _ continuation: CheckedContinuation<ServiceDiscoveryError?, Never>
    ) {
        pending = continuation
        let context = DNSSDCallbackContext { [weak self] reply in self?.handle(reply) }
        let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
            txt.withUnsafeBytes { buffer in
                DNSServiceRegister(
                    ref, 0, 0, name, type, DNSSDServiceDiscovery.domain, nil, UInt16(port).bigEndian,
                    UInt16(buffer.count), buffer.baseAddress, DNSSDCallbacks.register, context
                )
            }
        }
        switch result {
        case .success(let operation):
            self.operation = operation
        case .failure(let error):
            finish(error.publicError(.registrationFailed, "register \(type)"))
            return
        }
        let timeout = Int(DNSSDServiceDiscovery.registrationTimeout.components.seconds)
        queue.asyncAfter(deadline: .now() + .seconds(timeout)) { [weak self] in
            self?.finish(
                ServiceDiscoveryError(
                    code: .registrationFailed,
                    message: "the mDNS daemon did not confirm the registration in time: check "
                        + "`systemctl status avahi-daemon`"
                )
            )
        }
    }

    private func handle(_ reply: DNSSDReply) {
        switch reply {
        case .registered(_, let error) where error == cdnssd_no_error():
            finish(nil)
        case .registered(_, let error):
            finish(DNSSDCallError(code: error).publicError(.registrationFailed, "register"))
        case .failed(let error):
            finish(error.publicError(.registrationFailed, "register"))
        default:
            break
        }
    }

    private func finish(_ error: ServiceDiscoveryError?) {
        guard let pending else { return }
        self.pending = nil
        pending.resume(returning: error)
    }

    /// Withdraws the service. Idempotent.
    public func cancel() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.operation?.cancel()
                self.operation = nil
                self.finish(nil)
                continuation.resume()
            }
        }
    }
}
