import CanonicalJSON
import NIOCore

/// Limits and framing shared by the server and the client.
public enum ControlSocket {
    /// A request line, at most.
    public static let maxRequestBytes = 64 * 1024
    /// An answer line, at most.
    public static let maxAnswerBytes = 1024 * 1024
    /// Connections served at once.
    public static let maxConnections = 32

    /// `value` as one line of canonical JSON.
    static func line(_ value: JSONValue) -> ByteBuffer {
        ByteBuffer(bytes: value.canonicalBytes() + [UInt8(ascii: "\n")])
    }

    /// A Unix socket path must fit `sockaddr_un` (108 bytes on Linux, 104 on Apple platforms).
    static func checkPath(_ path: String) throws(ControlSocketError) {
        guard !path.isEmpty, path.utf8.count < 104 else {
            throw ControlSocketError(
                .unavailable,
                "The control socket path \(path) is longer than a Unix socket allows (103 bytes); use a shorter "
                    + "data directory.")
        }
    }
}

/// A control socket could not be used; the message says why.
public struct ControlSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// No process serves the socket.
        case notRunning
        /// Another process serves the socket already.
        case alreadyRunning
        /// A line that is too long or not JSON.
        case invalidMessage
        /// The socket cannot be created or bound.
        case unavailable
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
