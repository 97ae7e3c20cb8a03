import CDNSSD
import Dispatch

/// Owns one `DNSServiceRef` and services its socket.
///
/// Threading: every DNS-SD call of a ``DNSSDServiceDiscovery`` runs on its one private serial `queue`. Each
/// operation watches `DNSServiceRefSockFD` with a `DispatchSourceRead` on that queue and calls
/// `DNSServiceProcessResult` when it is readable, so C callbacks also run on the queue, one at a time.
///
/// Ownership: the callback context (a ``DNSSDCallbackContext``) is retained while the ref lives. The ref is
/// deallocated exactly once: by the read source's cancel handler (which dispatch runs after any in-flight event
/// handler, so never under a running callback), or by `deinit` if the source was never started.
final class DNSServiceOperation: @unchecked Sendable {
    // Safe: `state` is only read and written on `queue` (asserted), except in `deinit`, which has exclusive access;
    // `ref`, `context` and `queue` are immutable.
    private enum State {
        case idle
        case running(any DispatchSourceRead)
        case finished
    }

    private let queue: DispatchQueue
    private let ref: DNSServiceRef
    private let context: Unmanaged<DNSSDCallbackContext>
    private var state = State.idle

    /// Creates a ref with `create` and starts servicing it. Call on `queue`.
    ///
    /// - Parameters:
    ///   - queue: The adapter's serial queue.
    ///   - context: Receives the callbacks.
    ///   - create: Calls the `DNSService…` constructor with the ref slot and the context pointer.
    /// - Returns: The running operation, or the dns_sd error code.
    static func start(
        on queue: DispatchQueue,
        context: DNSSDCallbackContext,
        _ create: (UnsafeMutablePointer<DNSServiceRef?>, UnsafeMutableRawPointer) -> DNSServiceErrorType
    ) -> Result<DNSServiceOperation, DNSSDCallError> {
        dispatchPrecondition(condition: .onQueue(queue))
        DNSSDServiceDiscovery.prepareLibrary()
        let retained = Unmanaged.passRetained(context)
        var ref: DNSServiceRef?
        let error = create(&ref, retained.toOpaque())
        guard error == cdnssd_no_error(), let ref else {
            retained.release()
            return .failure(DNSSDCallError(code: error == cdnssd_no_error() ? -65537 : error))
        }
        let operation = DNSServiceOperation(queue: queue, ref: ref, context: retained)
        operation.resume()
        return .success(operation)
    }

    private init(queue: DispatchQueue, ref: DNSServiceRef, context: Unmanaged<DNSSDCallbackContext>) {
        self.queue = queue
        self.ref = ref
        self.context = context
    }

    private func resume() {
        let source = DispatchSource.makeReadSource(fileDescriptor: DNSServiceRefSockFD(ref), queue: queue)
        let ref = UncheckedRef(ref: ref, context: context)
        source.setEventHandler { [weak self] in
            let error = DNSServiceProcessResult(ref.ref)
            if error != cdnssd_no_error() {
                self?.cancel()
                ref.context.takeUnretainedValue().handle(.failed(DNSSDCallError(code: error)))
            }
        }
        source.setCancelHandler {
            DNSServiceRefDeallocate(ref.ref)
            ref.context.release()
        }
        state = .running(source)
        source.resume()
    }

    /// Stops the operation; the ref is deallocated once dispatch confirms the cancellation. Idempotent. Call on
    /// `queue`.
    func cancel() {
        dispatchPrecondition(condition: .onQueue(queue))
        if case .running(let source) = state { source.cancel() }
        state = .finished
    }

    /// Replaces the TXT record of a registration (Avahi supports only the primary record: RecordRef NULL).
    ///
    /// - Returns: The dns_sd error, if any.
    func updatePrimaryTXT(_ bytes: [UInt8]) -> DNSSDCallError? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard case .running = state else { return DNSSDCallError(code: -65541) }  // kDNSServiceErr_BadReference
        let error = bytes.withUnsafeBytes { buffer in
            DNSServiceUpdateRecord(ref, nil, 0, UInt16(buffer.count), buffer.baseAddress, 0)
        }
        return error == cdnssd_no_error() ? nil : DNSSDCallError(code: error)
    }

    deinit {
        switch state {
        case .idle:
            DNSServiceRefDeallocate(ref)
            context.release()
        case .running(let source):
            source.cancel()  // the cancel handler deallocates
        case .finished:
            break
        }
    }
}

/// The ref and context captured by the read source's handlers.
// Safe: both handlers run on the operation's serial queue, the only place the ref is used after creation.
private struct UncheckedRef: @unchecked Sendable {
    let ref: DNSServiceRef
    let context: Unmanaged<DNSSDCallbackContext>
}

/// A dns_sd error code from a call or callback.
struct DNSSDCallError: Error, Sendable, Hashable {
    var code: DNSServiceErrorType

    /// The public error for a failure while doing `action` (e.g. "register", "browse").
    func publicError(_ fallback: ServiceDiscoveryError.Code, _ action: String) -> ServiceDiscoveryError {
        switch code {
        // kDNSServiceErr_Unknown: Avahi's compat layer reports a missing daemon (or D-Bus) this way;
        // kDNSServiceErr_ServiceNotRunning: mDNSResponder's way.
        case -65537, -65563:
            return .daemonNotRunning
        case -65548:
            return ServiceDiscoveryError(
                code: .nameConflict,
                message:
                    "another service on the network already uses this name (\(action)): choose another name"
            )
        default:
            return ServiceDiscoveryError(
                code: fallback,
                message:
                    "DNS-SD \(action) failed with error \(code): check that the Avahi daemon is running and healthy "
                    + "(`systemctl status avahi-daemon`)"
            )
        }
    }
}
