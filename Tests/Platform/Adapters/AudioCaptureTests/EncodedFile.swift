import Foundation
import GStreamer

/// Encodes test audio into compressed formats with GStreamer's own encoders, through the GStreamer adapter:
/// `filesrc ! wavparse ! audioconvert ! <encoder elements> ! filesink`.
enum EncodedFile {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Encodes a WAV file with `encoder`, a chain of element factories such as `["flacenc"]` or
    /// `["vorbisenc", "oggmux"]`.
    static func encode(wav: String, to output: String, with encoder: [String]) throws {
        let pipeline = try Pipeline(name: "test-encode")
        defer { pipeline.tearDown() }
        let source = try pipeline.make("filesrc", name: "source")
        source.set("location", wav)
        let sink = try pipeline.make("filesink", name: "sink")
        sink.set("location", output)
        var chain = [source, try pipeline.make("wavparse", name: nil), try pipeline.make("audioconvert", name: nil)]
        for factory in encoder { chain.append(try pipeline.make(factory, name: nil)) }
        try pipeline.link(chain + [sink])
        guard pipeline.setState(.playing) else {
            throw Failure(description: "encoding with \(encoder) did not start")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard let message = pipeline.bus.pop(timeout: .milliseconds(100)) else { continue }
            switch message.kind {
            case .endOfStream: return
            case .error(let failure): throw Failure(description: "encoding with \(encoder) failed: \(failure.reason)")
            default: continue
            }
        }
        throw Failure(description: "encoding with \(encoder) timed out")
    }
}
