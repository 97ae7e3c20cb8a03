import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A reason the server cannot start, worded as what to do about it.
public struct ServerStartupError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// Explains an error from starting the HTTP server (e.g. the port is taken) in terms of the command's options;
    /// nil when there is nothing better to say than the error itself.
    public static func explaining(_ error: any Error, host: String, port: Int) -> ServerStartupError? {
        if let error = error as? ServerStartupError { return error }
        let errno: Int32? =
            if let io = error as? IOError { io.errnoCode } else { nil }
        let text = String(describing: error)
        if errno == EADDRINUSE || text.contains("Address already in use") {
            return ServerStartupError(
                "port \(port) on \(host) is already in use: choose another with --port N (or --port 0 for any free port)"
            )
        }
        if errno == EADDRNOTAVAIL || text.contains("Cannot assign requested address") {
            return ServerStartupError(
                "\(host) is not an address of this machine: use --host 127.0.0.1, 0.0.0.0 or one of its own addresses"
            )
        }
        if errno == EACCES || text.contains("Permission denied") {
            return ServerStartupError("no permission to listen on port \(port): use a port above 1023 with --port N")
        }
        return nil
    }
}
