import CribCallMonitor
import CribCallProtocol
import Foundation
import QRCode
import Synchronization

/// `cribcall monitor --qr-png FILE`: the pairing QR code as a PNG image in a ``PrivateFile`` (mode 0600, never
/// written through a symbolic link), there only while its one-time token can pair.
///
/// The file is removed when a listener used the token (the monitor reports `paired` by QR code), when the token
/// expired, when a new code replaces it (then the new one is written) and when the monitor stops.
final class PairingQRFile: Sendable {
    /// The file.
    let file: PrivateFile
    /// How long a code's token lives: what ``CribCallMonitor/MonitorService/showQR(lifetime:port:)`` gives it. The
    /// `qr` event does not carry it; the verifier caps every token at this, so the file never outlives its token.
    let lifetime: Duration
    /// What the expiry is timed on.
    let clock: any StreamClock
    private let state = Mutex(State())

    private struct State {
        /// Counts the codes written and removed: an expiry timer removes the file only if nothing happened since.
        var generation = 0
        /// The file holds a code written here (nothing else at the path is ever removed).
        var written = false
        var expiry: Task<Void, Never>?

        /// Stops the expiry timer and removes the code, if one was written.
        mutating func clear(_ file: PrivateFile) {
            expiry?.cancel()
            expiry = nil
            generation += 1
            if written { file.remove() }
            written = false
        }
    }

    /// - Parameters:
    ///   - path: The file (`--qr-png`).
    ///   - lifetime: How long a code's token lives.
    ///   - clock: What the expiry is timed on (tests advance one by hand).
    init(
        path: String,
        lifetime: Duration = QRPairingVerifier.maxTokenLifetime,
        clock: any StreamClock = SystemStreamClock()
    ) {
        file = PrivateFile(path: path)
        self.lifetime = lifetime
        self.clock = clock
    }

    /// Follows the monitor: writes a shown code, removes a used one.
    ///
    /// - Returns: Whether the file now holds the code of a `qr` event (false for other events).
    /// - Throws: ``PrivateFile/Failure`` when a code could not be written (no code is left in the file then).
    @discardableResult
    func observe(_ event: MonitorEvent) throws(PrivateFile.Failure) -> Bool {
        switch event {
        case .qr(_, let text):
            try show(text)
            return true
        case .paired(_, _, _, let method) where method == "qr":
            remove()
            return false
        default:
            return false
        }
    }

    /// Writes the PNG of `text`, replacing an earlier code, and removes it after ``lifetime``.
    ///
    /// - Throws: ``PrivateFile/Failure`` when the file cannot be written (an earlier code is removed even then).
    func show(_ text: String) throws(PrivateFile.Failure) {
        let png: Data
        do {
            png = Data(try QRCodeEncoder.encode(text).png())
        } catch {
            remove()
            throw .system(path: file.path, operation: "encode the QR code for", reason: "\(error)")
        }
        try state.withLock { (state: inout State) throws(PrivateFile.Failure) in
            // The earlier code's token died when this one was shown. Writing replaces its file; a failed write
            // leaves none (PrivateFile removed it first), and a refused path is left as it is.
            state.clear(file)
            try file.write(png)
            state.written = true
            let generation = state.generation
            let deadline = clock.now + lifetime
            state.expiry = Task { [weak self, clock] in
                guard (try? await clock.sleep(until: deadline)) != nil else { return }
                self?.expire(generation)
            }
        }
    }

    /// Removes the code (if any) now.
    func remove() {
        state.withLock { $0.clear(file) }
    }

    private func expire(_ generation: Int) {
        state.withLock { state in
            guard state.generation == generation else { return }
            state.clear(file)
        }
    }

    deinit {
        state.withLock { $0.expiry?.cancel() }
    }
}
