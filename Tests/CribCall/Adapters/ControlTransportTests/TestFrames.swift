import ControlTransport
import DeviceIdentity
import Foundation
import NIOCore

/// Frame building and reading shared by the transport tests.
enum TestFrames {
    /// A frame: 4-byte big-endian length, then the payload (no validation: tests build bad frames too).
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + payload
    }

    static func bytes(_ buffer: ByteBuffer) -> [UInt8] {
        Array(buffer.readableBytesView)
    }

    /// Every frame until the end of the stream.
    static func drain(_ queue: InboundFrameQueue) async throws -> [[UInt8]] {
        try await drain(ControlFrameSequence(queue))
    }

    static func drain(_ frames: ControlFrameSequence) async throws -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        for try await frame in frames { payloads.append(bytes(frame)) }
        return payloads
    }

    /// A fixed clock reading for generating identities.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    /// The certificate of a freshly generated device.
    static func certificate() throws -> PeerCertificate {
        PeerCertificate(identity: try DeviceIdentity.generate(now: now))
    }
}
