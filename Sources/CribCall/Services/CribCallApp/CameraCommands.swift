import CribCallProtocol
public import CribCallRuntime
import Foundation

/// `cribcall camera disconnect|reconnect`: lets go of the running monitor's camera as if it were unplugged, or tries
/// it again — for trying out the paused state (seed 003 §5) without pulling a cable, as `alert trigger` tries
/// alerts. The app's "Reconnect camera" does the same as `reconnect`.
public enum CameraCommands {
    public static let actions = MonitorControlRequest.CameraAction.allCases.map(\.rawValue)

    /// - Returns: The line to print.
    public static func run(_ action: String, in data: CribCallDataDirectory) async throws -> String {
        guard let action = MonitorControlRequest.CameraAction(rawValue: action) else {
            throw CommandFailure.usage("unknown action \(String(reflecting: action)); use disconnect or reconnect")
        }
        if case .refused(let reason) = try await AlertCommands.ask(.camera(action), in: data) {
            throw CommandFailure(reason)
        }
        return action == .disconnect
            ? "The camera is disconnected: monitoring pauses within 2 s. `cribcall camera reconnect` brings it back."
            : "Trying the camera again."
    }
}
