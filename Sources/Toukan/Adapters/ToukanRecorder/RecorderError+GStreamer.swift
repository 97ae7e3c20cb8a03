import AudioCapture
import Foundation
import GStreamer

extension RecorderError {
    /// GStreamer that does not initialise, elements that are not installed, a pipeline it cannot assemble.
    init(_ error: GStreamerError) {
        switch error.code {
        case .missingElements, .unavailable: self.init(code: .missingDependency, message: error.message)
        default: self.init(code: .encodingFailed, message: error.message)
        }
    }

    /// An input that cannot be opened, as the recorder reports it.
    init(_ error: AudioCaptureError) {
        switch error.code {
        case .invalidSource: self.init(code: .invalidSource, message: error.message)
        case .missingPlugin, .gstreamerUnavailable: self.init(code: .missingDependency, message: error.message)
        case .unsupportedFormat: self.init(code: .noAudio, message: error.message)
        default: self.init(code: .inputUnavailable, message: error.message)
        }
    }

    /// A failure of the encoder pipeline while writing `output`.
    init(_ failure: GStreamerFailure, writing output: URL) {
        if failure.isOutOfSpace {
            self.init(
                code: .diskFull,
                message: "the disk holding \(output.path) is full (\(failure.reason)): the recording stopped and "
                    + "what was written is kept; free some space, then recover the file"
            )
        } else if failure.isWriteFailure {
            self.init(
                code: .outputUnwritable,
                message: "cannot write the recording \(output.path) (\(failure.reason)): check that its directory "
                    + "exists and is writable"
            )
        } else if failure.isMissingPlugin {
            self.init(
                code: .missingDependency,
                message: "GStreamer lacks a plugin to encode AAC (\(failure.reason)): install gstreamer1.0-libav"
            )
        } else {
            self.init(
                code: .encodingFailed,
                message: "encoding \(output.path) failed in \(failure.elementName) (\(failure.reason)): "
                    + "run with GST_DEBUG=3 for GStreamer's log"
            )
        }
    }
}
