public import Crypto
public import Foundation

/// The checksum extension's `Upload-Checksum: sha1 <base64 digest>` of one PATCH chunk.
public struct TusChecksum: Sendable, Hashable {
    public let algorithm: String
    public let digest: [UInt8]

    /// The checksum of `bytes` (SHA-1, the algorithm every tus server must support).
    public init(of bytes: some DataProtocol) {
        algorithm = "sha1"
        digest = Array(Insecure.SHA1.hash(data: bytes))
    }

    /// Reads an `Upload-Checksum` header.
    /// - Throws: `TusServerError` 400 for an unsupported algorithm or a digest that is not base64 of the right
    ///   length.
    public init(header: String) throws(TusServerError) {
        let parts = header.trimmingSpaces.split(separator: " ")
        guard parts.count == 2 else {
            throw TusServerError(status: 400, "Upload-Checksum \(header.debugDescription) is not `algorithm base64`")
        }
        guard Tus.checksumAlgorithms.contains(String(parts[0])) else {
            throw TusServerError(
                status: 400, "checksum algorithm \(String(parts[0]).debugDescription) is not supported; use sha1",
                headers: ["Tus-Checksum-Algorithm": Tus.checksumAlgorithms.joined(separator: ",")])
        }
        guard let data = Data(base64Encoded: String(parts[1])), data.count == Insecure.SHA1.byteCount else {
            throw TusServerError(status: 400, "Upload-Checksum's digest is not a base64 SHA-1")
        }
        algorithm = String(parts[0])
        digest = Array(data)
    }

    public var headerValue: String { "\(algorithm) \(Data(digest).base64EncodedString())" }
}
