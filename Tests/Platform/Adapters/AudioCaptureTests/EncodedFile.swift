import CGStreamer
import Foundation

/// Encodes test audio into compressed formats with GStreamer's own encoders (test-only: the paths are the tests'
/// own temporary paths, so parsing a pipeline description is safe here).
enum EncodedFile {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Encodes a WAV file with `encoder` (a pipeline fragment such as `flacenc` or `vorbisenc ! oggmux`).
    static func encode(wav: String, to output: String, with encoder: String) throws {
        guard gst_init_check(nil, nil, nil) != 0 else { throw Failure(description: "gst_init_check failed") }
        var error: UnsafeMutablePointer<GError>?
        let description =
            "filesrc location=\"\(wav)\" ! wavparse ! audioconvert ! \(encoder) ! "
            + "filesink location=\"\(output)\""
        guard let pipeline = gst_parse_launch(description, &error) else {
            defer { g_clear_error(&error) }
            throw Failure(
                description: "cannot build '\(description)': "
                    + (error.map { String(cString: $0.pointee.message) } ?? "?"))
        }
        g_clear_error(&error)
        defer {
            gst_element_set_state(pipeline, GST_STATE_NULL)
            gst_object_unref(pipeline)
        }
        let bus = gst_element_get_bus(pipeline)
        defer { gst_object_unref(bus) }
        gst_element_set_state(pipeline, GST_STATE_PLAYING)
        let types = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        guard let message = gst_bus_timed_pop_filtered(bus, 10 * cgst_second, types) else {
            throw Failure(description: "encoding with \(encoder) timed out")
        }
        defer { gst_message_unref(message) }
        guard cgst_message_type(message) == GST_MESSAGE_EOS else {
            throw Failure(description: "encoding with \(encoder) failed")
        }
    }
}
