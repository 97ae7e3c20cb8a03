import CanonicalJSON
import ControlSocket
import Foundation

/// `cribcall camera disconnect|reconnect`: lets go of the running monitor's camera as if it were unplugged, or tries
/// it again — for trying out the paused state (seed 003 §5) without pulling a cable, as `alert trigger` tries
/// alerts. The app's "Reconnect camera" does the same as `reconnect`.
public enum CameraCommands {
    public static let actions = ["disconnect", "reconnect"]

    /// - Returns: The line to print.
    public static func run(_ action: String, in data: CribCallDataDirectory) async throws -> String {
        guard actions.contains(action) else {
            throw CommandFailure.usage("unknown action \(String(reflecting: action)); use disconnect or reconnect")
        }
        let answer: JSONValue
        do {
            answer = try await ControlSocketClient.ask(
                path: data.controlSocket.path, ["command": "camera", "action": .string(action)])
        } catch let error as ControlSocketError where error.code == .notRunning {
            throw CommandFailure(
                "no monitor runs with the data directory \(data.url.path): start `cribcall monitor --safety` first")
        }
        guard answer["ok"] == true else {
            throw CommandFailure(answer["error"]?.stringValue ?? "the monitor refused")
        }
        return action == "disconnect"
            ? "The camera is disconnected: monitoring pauses within 2 s. `cribcall camera reconnect` brings it back."
            : "Trying the camera again."
    }
}
