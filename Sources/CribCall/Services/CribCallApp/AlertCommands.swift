import CanonicalJSON
import ControlSocket
import CribCallProtocol
import Foundation

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
        let answer: JSONValue
        do {
            answer = try await ControlSocketClient.ask(
                path: data.controlSocket.path, ["command": "trigger", "kind": .string(kind)])
        } catch let error as ControlSocketError where error.code == .notRunning {
            throw CommandFailure(
                "no monitor runs with the data directory \(data.url.path): start `cribcall monitor --safety` first")
        }
        guard answer["ok"] == true else {
            let reason = answer["error"]?.stringValue ?? "the monitor refused"
            throw CommandFailure(json ? answer.canonicalString : "not raised: \(reason)")
        }
        if json { return answer.canonicalString }
        let seq = answer["seq"]?.doubleValue.map { Int($0) } ?? 0
        return "Raised a \(answer["severity"]?.stringValue ?? "") \(kind) alert (#\(seq)); "
            + "it went to the connected listeners."
    }
}
