import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a request got no answer, in a few words for `toukan history` ("connection refused", "no answer within
/// 10 s"), instead of the nested descriptions of the error types underneath.
enum NetworkErrorText {
    static func describe(_ error: any Error, connectTimeout: Duration) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no answer within \(connectTimeout.components.seconds) s"
            case .readTimeout: return "the server stopped answering"
            case .writeTimeout: return "the server stopped reading"
            case .remoteConnectionClosed: return "the server closed the connection"
            case .tlsHandshakeTimeout: return "the TLS handshake did not finish"
            case .deadlineExceeded: return "it took too long"
            case .cancelled: return "cancelled"
            default: return "\(error)"
            }
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "\(error.host) is not a known name" }
            if let failure = error.connectionErrors.first {
                return describe(failure.error, connectTimeout: connectTimeout)
            }
            return "cannot connect to \(error.host)"
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)).lowercased() }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return "no answer within \(connectTimeout.components.seconds) s"
            case .ioOnClosedChannel, .outputClosed, .alreadyClosed, .eof: return "the connection was closed"
            default: return "\(error)"
            }
        }
        if error is NIOSSLError { return "TLS failed (\(error))" }
        return "\(error)"
    }
}
