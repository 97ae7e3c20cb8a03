import AudioCapture
import CribCallProtocol
import DeviceIdentity
import Foundation
import SoundDetection
import StreamMedia
import Synchronization
import Testing

@testable import Media

/// Collects a peer's events as they arrive and lets a test wait for one.
final class EventRecorder: Sendable {
    private final class Log: Sendable {
        let events = Mutex<[MediaEvent]>([])
        let flowingAt = Mutex<ContinuousClock.Instant?>(nil)
    }

    private let recorded = Log()
    private let task: Task<Void, Never>

    /// Starts consuming `peer.events`; `forward` runs for each event (e.g. to signal it to the other side).
    init(_ peer: any MediaPeer, forward: @escaping @Sendable (MediaEvent) async -> Void = { _ in }) {
        let recorded = self.recorded
        task = Task {
            for await event in peer.events {
                recorded.events.withLock { $0.append(event) }
                if event == .flowing { recorded.flowingAt.withLock { $0 = .now } }
                await forward(event)
            }
        }
    }

    deinit { task.cancel() }

    var events: [MediaEvent] { recorded.events.withLock { $0 } }

    /// When `.flowing` arrived.
    var firstFlowing: ContinuousClock.Instant? { recorded.flowingAt.withLock { $0 } }

    /// Waits until an event satisfies `predicate`; nil after `timeout`.
    func first(timeout: Duration = .seconds(20), where predicate: (MediaEvent) -> Bool) async -> MediaEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = events.first(where: predicate) { return event }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Waits until the stream has finished (after `.ended`).
    func finished(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if events.contains(where: \.isEnded) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

extension MediaEvent {
    var isEnded: Bool {
        if case .ended = self { return true }
        return false
    }

    var isFlowing: Bool { self == .flowing }

    var localDescription: String? {
        if case .localDescription(let sdp) = self { return sdp }
        return nil
    }

    var localCandidate: IceCandidateMessage.Candidate? {
        if case .localCandidate(let candidate) = self { return candidate }
        return nil
    }

    var endReason: String? {
        if case .ended(let reason) = self { return reason }
        return nil
    }
}

enum MediaTestSupport {
    /// A fresh ECDSA P-256 DTLS certificate, like the one `DeviceIdentityStore` keeps in dtls.pem.
    static func certificate() throws -> DTLSCertificate {
        try DTLSCertificate.generate(now: Date())
    }

    /// A monitor's engine on 127.0.0.1 whose senders play `audio` (the cry test signal by default).
    static func senderEngine(_ audio: AudioSourceSpec = .test(.cry)) throws -> GStreamerMediaEngine {
        try GStreamerMediaEngine(
            configuration: .init(dtlsCertificate: try certificate(), audioSource: audio, iceAddresses: ["127.0.0.1"])
        )
    }

    /// A listener's engine on 127.0.0.1 whose receivers send what they decode to `output`.
    static func receiverEngine(_ output: GStreamerMediaEngine.ReceiverOutput = .discard) throws -> GStreamerMediaEngine
    {
        try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try certificate(), iceAddresses: ["127.0.0.1"], receiverOutput: output)
        )
    }

    /// Waits until the peer's pipeline and its Swift driver are released (proves teardown without leaks).
    static func released(_ peer: any MediaPeer, timeout: Duration = .seconds(10)) async -> Bool {
        guard let peer = peer as? GStreamerMediaPeer else { return false }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if peer.isFullyReleased { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A 16-bit PCM WAV file as written by the receiver.
struct WAVRecording {
    var sampleRate: Int
    var channels: Int
    var samples: [Float]

    var duration: Double { Double(samples.count) / Double(sampleRate * channels) }

    init(contentsOf url: URL) throws {
        let bytes = Array(try Data(contentsOf: url))
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count >= 44, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else { throw WAVError(description: "\(url.lastPathComponent) is not a WAV file (\(bytes.count) bytes)") }
        var offset = 12
        var format: (channels: Int, rate: Int, bits: Int)?
        var data: ArraySlice<UInt8>?
        while offset + 8 <= bytes.count {
            let size = u32(offset + 4)
            let body = offset + 8
            if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8) {
                format = (u16(body + 2), u32(body + 4), u16(body + 14))
            } else if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                data = bytes[body..<min(bytes.count, body + size)]
            }
            offset = body + size + (size & 1)
        }
        guard let format, format.bits == 16, let data else {
            throw WAVError(description: "\(url.lastPathComponent) has no 16-bit PCM data chunk")
        }
        sampleRate = format.rate
        channels = format.channels
        samples = stride(from: data.startIndex, to: data.endIndex - 1, by: 2).map { index in
            Float(Int16(bitPattern: UInt16(data[index]) | UInt16(data[index + 1]) << 8)) / 32_768
        }
    }

    /// Root mean square of a range of samples.
    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// The frequency of a tone estimated from its zero crossings.
    static func zeroCrossingFrequency(_ samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        var crossings = 0
        var previous = samples.first ?? 0
        for sample in samples.dropFirst() {
            if (previous < 0) != (sample < 0) { crossings += 1 }
            previous = sample
        }
        return Double(crossings) / 2 / (Double(samples.count) / Double(sampleRate))
    }
}

struct WAVError: Error, CustomStringConvertible {
    var description: String
}
