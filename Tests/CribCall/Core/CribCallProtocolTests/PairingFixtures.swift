import CribCallProtocol
import DeviceIdentity
import Foundation

/// Devices and helpers shared by the pairing tests: real identities, and the TLS view each connection has.
struct Devices {
    let monitor: DeviceIdentity
    let listener: DeviceIdentity
    /// A device on the LAN that pretends to be a monitor (it has its own key: it cannot present the real one).
    let impostor: DeviceIdentity

    init() throws {
        let now = Date()
        monitor = try DeviceIdentity.generate(now: now)
        listener = try DeviceIdentity.generate(now: now)
        impostor = try DeviceIdentity.generate(now: now)
    }

    var monitorId: String { monitor.deviceId.uuidString.lowercased() }
    var local: LocalDevice { LocalDevice(listener, name: "Dad’s Phone") }

    /// What `server` sees of a connection from `client` in TLS.
    static func context(server: DeviceIdentity, client: DeviceIdentity) -> PairingContext {
        PairingContext(
            monitorId: server.deviceId,
            monitorFingerprint: server.fingerprint,
            clientFingerprint: client.fingerprint,
            clientPublicKeySPKI: client.publicKeySPKI
        )
    }

    var monitorContext: PairingContext { Self.context(server: monitor, client: listener) }
}

extension Array where Element == PINPairingMonitor.Action {
    /// The messages among the actions, in order.
    var sent: [ControlMessage] {
        compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    var closeCode: ErrorCode? {
        compactMap { if case .close(let code) = $0 { code } else { nil } }.first
    }

    var trusted: TrustedListener? {
        compactMap { if case .trust(let listener) = $0 { listener } else { nil } }.first
    }

    var persistedCounter: Int? {
        compactMap { if case .persistFailedSessions(let count) = $0 { count } else { nil } }.last
    }
}

extension ControlMessage {
    var rejected: PairRejected? {
        if case .pairRejected(let rejected) = self { rejected } else { nil }
    }

    var pinRequired: PinRequired? {
        if case .pinRequired(let required) = self { required } else { nil }
    }
}
