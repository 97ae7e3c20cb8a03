public import CanonicalJSON

/// A request on the recorder daemon's control socket (`<data>/toukan.sock`, one JSON object per line, owner-only):
/// what `toukan start`, `stop`, `status`, `watch` and the ledger's commands send. Local to one user on one machine,
/// typed so the commands and the daemon cannot drift apart. The answers are typed too: ``DaemonReply`` (start, stop,
/// wake, quit) and ``DaemonStatus`` (status, watch).
public enum DaemonRequest: Sendable, Hashable {
    /// `{"command":"start","source":S,"server":URL?}`: start recording from `source` (`auto`, a device, a file);
    /// a `server` is remembered for the uploads first.
    case start(source: String, server: String?)
    /// `{"command":"stop"}`: save the recording.
    case stop
    /// `{"command":"status"}`: what the daemon does now.
    case status
    /// `{"command":"watch"}`: the status four times a second until the caller hangs up.
    case watch
    /// `{"command":"wake"}`: look at the upload queue now (a recording was queued or retried).
    case wake
    /// `{"command":"quit"}`: the daemon ends (after saving what it records).
    case quit

    /// A request that cannot be read, in words for the caller.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Reads a request line's object. - Throws: ``Invalid`` saying what to send instead.
    public init(json: JSONValue) throws(Invalid) {
        switch json["command"]?.stringValue {
        case "start":
            if let server = json["server"], server.stringValue == nil {
                throw Invalid(message: "server must be an http(s) URL")
            }
            self = .start(source: json["source"]?.stringValue ?? "auto", server: json["server"]?.stringValue)
        case "stop": self = .stop
        case "status": self = .status
        case "watch": self = .watch
        case "wake": self = .wake
        case "quit": self = .quit
        default: throw Invalid(message: "unknown command; expected start, stop, status, watch, wake or quit")
        }
    }

    /// The request line's object.
    public var json: JSONValue {
        switch self {
        case .start(let source, let server):
            var object: [String: JSONValue] = ["command": "start", "source": .string(source)]
            if let server { object["server"] = .string(server) }
            return .object(object)
        case .stop: return ["command": "stop"]
        case .status: return ["command": "status"]
        case .watch: return ["command": "watch"]
        case .wake: return ["command": "wake"]
        case .quit: return ["command": "quit"]
        }
    }
}
