import CribCallProtocol
import Testing

@Suite("AuthorizationPolicy: PROTOCOL.md §4 as a table")
struct AuthorizationPolicyTests {
    @Test("an untrusted client may send exactly the three pairing requests", arguments: ControlMessageType.allCases)
    func untrustedKnownTypes(_ type: ControlMessageType) {
        let decision = AuthorizationPolicy.decide(
            type: type, typeName: type.rawValue, role: .monitor, trust: .untrusted)
        if [.pairRequest, .pinPairingInit, .pinSubmit].contains(type) {
            #expect(decision == .process)
        } else {
            guard case .reject(let code, let close, _) = decision else {
                Issue.record("\(type.rawValue) from an untrusted client must be rejected")
                return
            }
            #expect(code == .unauthorized)
            #expect(close)
        }
    }

    @Test("an untrusted PING is UNAUTHORIZED and closes (code 2)")
    func untrustedPing() {
        guard
            case .reject(let code, let close, let message) = AuthorizationPolicy.decide(
                .ping(Ping(timestamp: 1)), role: .monitor, trust: .untrusted)
        else {
            Issue.record("PING must be rejected")
            return
        }
        #expect(code == .unauthorized && code.rawValue == 2 && close)
        #expect(message.contains("pair first"))
    }

    @Test("an unknown type closes an untrusted session but keeps a trusted one open")
    func unknownType() {
        let untrusted = AuthorizationPolicy.decide(type: nil, typeName: "X", role: .monitor, trust: .untrusted)
        let trusted = AuthorizationPolicy.decide(type: nil, typeName: "X", role: .monitor, trust: .trusted)
        guard case .reject(.unsupportedMessage, true, _) = untrusted else {
            Issue.record("untrusted unknown type: \(untrusted)")
            return
        }
        guard case .reject(.unsupportedMessage, false, _) = trusted else {
            Issue.record("trusted unknown type: \(trusted)")
            return
        }
    }

    @Test(
        "a trusted listener may send every listener type; monitor-only types are UNSUPPORTED, kept open",
        arguments: ControlMessageType.allCases)
    func trustedTypes(_ type: ControlMessageType) {
        let decision = AuthorizationPolicy.decide(type: type, typeName: type.rawValue, role: .monitor, trust: .trusted)
        if type.isSentByListener {
            #expect(decision == .process)
        } else {
            guard case .reject(.unsupportedMessage, false, _) = decision else {
                Issue.record("\(type.rawValue): \(decision)")
                return
            }
        }
    }

    @Test(
        "a listener processes what monitors send and answers anything else UNSUPPORTED, open",
        arguments: ControlMessageType.allCases)
    func listenerSide(_ type: ControlMessageType) {
        let decision = AuthorizationPolicy.decide(
            type: type, typeName: type.rawValue, role: .listener, trust: .untrusted)
        if type.isSentByMonitor {
            #expect(decision == .process)
        } else {
            guard case .reject(.unsupportedMessage, false, _) = decision else {
                Issue.record("\(type.rawValue): \(decision)")
                return
            }
        }
    }

    @Test("peer-chosen type names are cut short in error messages")
    func longTypeNameIsTruncated() {
        let name = String(repeating: "A", count: 10_000)
        guard
            case .reject(_, _, let message) = AuthorizationPolicy.decide(
                type: nil, typeName: name, role: .monitor,
                trust: .trusted)
        else { return }
        #expect(message.count < 200)
    }

    @Test("every type is sent by at least one role, and pairing requests only by listeners")
    func roleTable() {
        for type in ControlMessageType.allCases {
            #expect(type.isSentByListener || type.isSentByMonitor, "\(type.rawValue) is sent by nobody")
            if type.isPairingRequest { #expect(type.isSentByListener && !type.isSentByMonitor) }
        }
    }

    @Test(
        "§11: listeners send ALERT_ACTION (trusted only); monitors send SAFETY_STATUS, SAFETY_ALERT, ALERT_UPDATED, MONITOR_STATE"
    )
    func safetyDirections() {
        #expect(ControlMessageType.alertAction.isSentByListener && !ControlMessageType.alertAction.isSentByMonitor)
        for type in [ControlMessageType.safetyStatus, .safetyAlert, .alertUpdated, .monitorState] {
            #expect(type.isSentByMonitor && !type.isSentByListener, "\(type.rawValue)")
        }
        let stranger = AuthorizationPolicy.decide(
            type: .alertAction, typeName: "ALERT_ACTION", role: .monitor, trust: .untrusted)
        guard case .reject(.unauthorized, true, _) = stranger else {
            Issue.record("an untrusted ALERT_ACTION must be refused: \(stranger)")
            return
        }
    }
}
