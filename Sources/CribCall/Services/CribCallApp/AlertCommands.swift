import CanonicalJSON
import ControlSocket
import CribCallListener
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import DeviceIdentityStore
import Foundation
import QUIC

/// `cribcall alert trigger KIND`: a debug trigger (seed 003 §6.3) that raises a safety alert through the running
/// monitor's real path — logged, sent to the paired listeners within a second, refused while monitoring is paused
/// or stale, while that kind is muted, or with safety alerts off.
public enum AlertCommands {
    /// The kinds, for help texts.
    public static var kindList: String { SafetyAlertKind.known.map(\.rawValue).joined(separator: ", ") }

    /// Asks the monitor running with `data` to raise `kind`; returns the line to print.
    public static func trigger(_ kind: String, in data: CribCallDataDirectory, json: Bool) async throws -> String {
        guard SafetyAlertKind.known.contains(SafetyAlertKind(rawValue: kind)) else {
            throw CommandFailure.usage("unknown alert kind \(String(reflecting: kind)); use one of \(kindList)")
        }
        let answer = try await ask(.trigger(SafetyAlertKind(rawValue: kind)), in: data)
        switch answer {
        case .raised(_, let seq, _, let severity):
            if json { return answer.json.canonicalString }
            return "Raised a \(severity.rawValue) \(kind) alert (#\(seq)); it went to the connected listeners."
        case .refused(let reason):
            throw CommandFailure(json ? answer.json.canonicalString : "not raised: \(reason)")
        case .done, .safety:
            throw CommandFailure("the monitor answered something else than an alert: \(answer.json.canonicalString)")
        }
    }

    /// Asks the monitor running with `data` (its control socket); says how to start one when none runs.
    static func ask(_ request: MonitorControlRequest, in data: CribCallDataDirectory) async throws
        -> MonitorControlAnswer
    {
        let answer: JSONValue
        do {
            answer = try await ControlSocketClient.ask(path: data.controlSocket.path, request.json)
        } catch let error as ControlSocketError where error.code == .notRunning {
            throw CommandFailure(
                "no monitor runs with the data directory \(data.url.path): start `cribcall monitor --safety` first")
        }
        do throws(MonitorControlRequest.Invalid) {
            return try MonitorControlAnswer(json: answer)
        } catch {
            throw CommandFailure("the monitor's answer cannot be read (\(error.message)); is it the same version?")
        }
    }

    /// The actions, for help texts.
    public static var actionList: String { AlertActionKind.allCases.map(\.rawValue).joined(separator: ", ") }

    /// `cribcall alert act ACTION ALERT_ID`: from a listener, tells the monitor this parent is checking, that all is
    /// okay, or to mute the alert's kind for everyone; every listener hears it. Returns the line to print.
    public static func act(
        _ action: String, alertId: String, monitor name: String?, minutes: Int?, in data: CribCallDataDirectory,
        json: Bool
    ) async throws -> String {
        guard let kind = AlertActionKind(rawValue: action) else {
            throw CommandFailure.usage("unknown action \(String(reflecting: action)); use one of \(actionList)")
        }
        guard let database = try data.existingDatabase() else {
            throw CommandFailure("this listener has no paired monitor; pair one with `cribcall pair`")
        }
        let monitors = try database.trustedMonitors()
        let monitor: TrustedMonitorRecord
        if let name {
            monitor = try MonitorsCommands.resolve(name, among: monitors)
        } else if monitors.count == 1 {
            monitor = monitors[0]
        } else {
            throw CommandFailure.usage(
                monitors.isEmpty
                    ? "this listener has no paired monitor; pair one with `cribcall pair`"
                    : "several monitors are paired: name one with --monitor")
        }
        let identity = try data.identity().identity
        let service = ListenerService(
            identity: identity, name: ProcessInfo.processInfo.hostName, database: database,
            connector: try QUICConnector(identity: identity))
        let update: AlertUpdated
        do {
            update = try await service.act(kind, on: alertId, monitor: monitor, minutes: minutes)
        } catch {
            throw CommandFailure("\(error)")
        }
        let event = ListenerEvent.alertUpdated(monitorId: monitor.monitorId, monitorName: monitor.name, update: update)
        return json ? event.json.canonicalString : event.text
    }
}
