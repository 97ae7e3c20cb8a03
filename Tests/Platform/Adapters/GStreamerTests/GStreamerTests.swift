import Foundation
import Synchronization
import TestSupport
import Testing

@testable import GStreamer

@Suite("The GStreamer adapter")
struct GStreamerTests {
    @Test("samples are read as native floats at any alignment; a trailing partial sample is ignored")
    func unalignedBytes() {
        let samples: [Float] = [0.5, -0.25, 1]
        var bytes: [UInt8] = [0xAA]  // shifts the floats off their natural alignment
        bytes += samples.withUnsafeBytes { Array($0) }
        bytes += [0x01, 0x02]  // a partial sample
        let floats = bytes.withUnsafeBytes { raw in
            Sample.floats(fromNativeBytes: UnsafeRawBufferPointer(rebasing: raw.dropFirst()))
        }
        #expect(floats == samples)
    }

    @Test("a missing element names the Debian package to install, once per package")
    func missingElements() throws {
        #expect(GStreamer.hasElement("appsink"))
        #expect(!GStreamer.hasElement("no-such-element"))
        #expect(GStreamer.missingElements(["appsink", "queue"]) == nil)
        let missing = try #require(GStreamer.missingElements(["appsink", "no-such-element"]))
        #expect(missing.elements == ["no-such-element"])
        let error = GStreamerError(MissingElements(["webrtcbin", "srtpenc", "nicesrc"]))
        #expect(error.code == .missingElements)
        #expect(
            error.message
                == "the GStreamer elements webrtcbin, srtpenc, nicesrc are not installed: install "
                + "gstreamer1.0-plugins-bad and gstreamer1.0-nice (e.g. apt-get install gstreamer1.0-plugins-bad "
                + "gstreamer1.0-nice)"
        )
        #expect(throws: GStreamerError.self) { try GStreamer.requireElements(["no-such-element"]) }
    }

    @Test("a pipeline plays to its end, posts EOS, and is released with every callback at teardown")
    func pipelineLifecycle() async throws {
        let pipeline = try Pipeline(name: "test-lifecycle")
        let source = try pipeline.make("audiotestsrc", name: "tone")
        source.set("num-buffers", Int32(5))
        let sink = try pipeline.make("appsink", name: "sink")
        try pipeline.link(source, sink)
        let received = Counter()
        sink.configureAppSink(caps: "audio/x-raw,format=F32LE,channels=1", sync: false) { sample in
            if let floats = sample.floats(), !floats.isEmpty { received.add() }
            return .ok
        }
        let finalized = Counter()
        pipeline.onFinalized { finalized.add() }
        #expect(pipeline.setState(.playing))
        var ended = false
        let deadline = ContinuousClock.now + .seconds(30)
        while !ended, ContinuousClock.now < deadline {
            guard let message = pipeline.bus.pop(timeout: .milliseconds(250)) else { continue }
            switch message.kind {
            case .endOfStream: ended = true
            case .error(let failure): Issue.record("unexpected error: \(failure.message)")
            default: break
            }
        }
        #expect(ended)
        #expect(received.value == 5)
        pipeline.tearDown()
        // Finalisation may complete on a GStreamer thread just after the teardown returns (a streaming thread can
        // drop the last reference of an element a moment later): wait for it, with a bound.
        try await eventually("the pipeline is finalised", timeout: .seconds(10)) { finalized.value == 1 }
        pipeline.bus.post(application: "after-teardown")  // safe: the bus outlives the pipeline, and is flushing
        #expect(pipeline.bus.pop(timeout: .zero) == nil)
    }

    @Test("an element that cannot start posts an ERROR with its domain, reason and element")
    func failureFromBus() throws {
        let pipeline = try Pipeline(name: "test-failure")
        let source = try pipeline.make("filesrc", name: "missing-file")
        source.set("location", "/nonexistent/\(UUID().uuidString).wav")
        let sink = try pipeline.make("fakesink", name: "sink")
        try pipeline.link(source, sink)
        defer { pipeline.tearDown() }
        #expect(!pipeline.setState(.paused))  // filesrc opens its file going to PAUSED
        let failure = try #require(pipeline.bus.popError(timeout: .seconds(5)))
        #expect(failure.domain == .resource)
        #expect(failure.elementName == "missing-file")
        #expect(failure.reason.contains("No such file"))
    }

    @Test("a link GStreamer refuses says which elements")
    func refusedLink() throws {
        let pipeline = try Pipeline(name: "test-link")
        defer { pipeline.tearDown() }
        let audio = try pipeline.make("audiotestsrc", name: "audio")
        let video = try pipeline.make("videoconvert", name: "video")
        #expect(throws: GStreamerError(code: .pipeline, message: "GStreamer could not link audio to video")) {
            try pipeline.link(audio, video)
        }
        #expect(throws: GStreamerError.self) { try pipeline.make("no-such-element", name: "x") }
    }
}

/// A thread-safe count for callbacks on streaming threads.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}
