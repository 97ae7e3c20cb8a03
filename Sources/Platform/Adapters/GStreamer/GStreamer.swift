import CGStreamer

/// The process's GStreamer: initialised once, and the element factories it has (with the Debian package that
/// provides each, for error messages that say what to install).
public enum GStreamer {
    /// `gst_init_check`, run once: Swift initialises a static `let` exactly once, thread-safely.
    private static let initialization: Result<Void, GStreamerError> = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            return .failure(
                GStreamerError(
                    code: .unavailable,
                    message: "GStreamer could not be initialised (\(reason)): "
                        + "reinstall libgstreamer1.0-0 and gstreamer1.0-plugins-base"
                )
            )
        }
        return .success(())
    }()

    /// Initialises GStreamer on first use; later calls return at once.
    ///
    /// - Throws: ``GStreamerError/Code/unavailable`` if `gst_init_check` fails.
    public static func initialize() throws(GStreamerError) {
        try initialization.get()
    }

    /// Caps of mono native-endian 32-bit float audio at `rate`, as `Sample.floats()` reads it and `AppSource.push`
    /// writes it.
    public static func monoFloatCaps(rate: Int) -> String {
        #if _endian(little)
            let format = "F32LE"
        #else
            let format = "F32BE"
        #endif
        return "audio/x-raw,format=\(format),rate=\(rate),channels=1,layout=interleaved"
    }

    /// Whether an element factory is registered (its plugin is installed and loads). Initialises GStreamer.
    public static func hasElement(_ factoryName: String) -> Bool {
        guard (try? initialize()) != nil, let factory = gst_element_factory_find(factoryName) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }

    /// The factories of `factoryNames` that are not installed, with the packages to install; nil if all are.
    public static func missingElements(_ factoryNames: [String]) -> MissingElements? {
        let missing = factoryNames.filter { !hasElement($0) }
        return missing.isEmpty ? nil : MissingElements(missing)
    }

    /// Throws if one of the elements is not installed, naming the package to install.
    ///
    /// - Throws: ``GStreamerError/Code/missingElements``.
    public static func requireElements(_ factoryNames: [String]) throws(GStreamerError) {
        try initialize()
        if let missing = missingElements(factoryNames) { throw GStreamerError(missing) }
    }

    /// The Debian package that provides each element the package's pipelines use.
    public static let packages: [String: String] = [
        // core (libgstreamer1.0-0)
        "capsfilter": "libgstreamer1.0-0", "fakesink": "libgstreamer1.0-0", "filesink": "libgstreamer1.0-0",
        "filesrc": "libgstreamer1.0-0", "identity": "libgstreamer1.0-0", "queue": "libgstreamer1.0-0",
        "tee": "libgstreamer1.0-0",
        // -base
        "appsink": "gstreamer1.0-plugins-base", "appsrc": "gstreamer1.0-plugins-base",
        "audioconvert": "gstreamer1.0-plugins-base", "audioresample": "gstreamer1.0-plugins-base",
        "audiotestsrc": "gstreamer1.0-plugins-base", "decodebin": "gstreamer1.0-plugins-base",
        "opusdec": "gstreamer1.0-plugins-base", "opusenc": "gstreamer1.0-plugins-base",
        "videoconvert": "gstreamer1.0-plugins-base", "videorate": "gstreamer1.0-plugins-base",
        "videoscale": "gstreamer1.0-plugins-base", "videotestsrc": "gstreamer1.0-plugins-base",
        // -good
        "autoaudiosink": "gstreamer1.0-plugins-good", "autoaudiosrc": "gstreamer1.0-plugins-good",
        "autovideosink": "gstreamer1.0-plugins-good", "matroskamux": "gstreamer1.0-plugins-good",
        "rtpbin": "gstreamer1.0-plugins-good", "rtph264depay": "gstreamer1.0-plugins-good",
        "rtph264pay": "gstreamer1.0-plugins-good", "rtpopusdepay": "gstreamer1.0-plugins-good",
        "rtpopuspay": "gstreamer1.0-plugins-good", "rtpvp8depay": "gstreamer1.0-plugins-good",
        "rtpvp8pay": "gstreamer1.0-plugins-good", "v4l2src": "gstreamer1.0-plugins-good",
        "vp8dec": "gstreamer1.0-plugins-good", "vp8enc": "gstreamer1.0-plugins-good",
        "wavenc": "gstreamer1.0-plugins-good", "wavparse": "gstreamer1.0-plugins-good",
        "mp4mux": "gstreamer1.0-plugins-good", "qtdemux": "gstreamer1.0-plugins-good",
        "aacparse": "gstreamer1.0-plugins-good", "jpegenc": "gstreamer1.0-plugins-good",
        // OpenCV's Haar cascades (face detection)
        "facedetect": "gstreamer1.0-opencv",
        // FFmpeg's encoders and decoders (AAC-LC: avenc_aac)
        "avenc_aac": "gstreamer1.0-libav", "avdec_aac": "gstreamer1.0-libav",
        // -bad, -ugly, devices
        "dtlssrtpdec": "gstreamer1.0-plugins-bad", "dtlssrtpenc": "gstreamer1.0-plugins-bad",
        "h264parse": "gstreamer1.0-plugins-bad", "openh264dec": "gstreamer1.0-plugins-bad",
        "srtpdec": "gstreamer1.0-plugins-bad", "srtpenc": "gstreamer1.0-plugins-bad",
        "webrtcbin": "gstreamer1.0-plugins-bad", "x264enc": "gstreamer1.0-plugins-ugly",
        "nicesink": "gstreamer1.0-nice", "nicesrc": "gstreamer1.0-nice",
        "alsasrc": "gstreamer1.0-alsa", "pulsesrc": "gstreamer1.0-pulseaudio",
    ]
}

/// Element factories that are not installed, and the Debian packages that provide them.
public struct MissingElements: Sendable, Hashable {
    /// The factory names, in the order asked for.
    public let elements: [String]
    /// The packages to install, without repetition.
    public let packages: [String]

    public init(_ elements: [String]) {
        self.elements = elements
        var packages: [String] = []
        for name in elements {
            let package = GStreamer.packages[name] ?? "the GStreamer plugin providing \(name)"
            if !packages.contains(package) { packages.append(package) }
        }
        self.packages = packages
    }

    /// "element x is" or "elements x, y are", for "the GStreamer … not installed".
    public var subject: String {
        elements.count == 1 ? "element \(elements[0]) is" : "elements \(elements.joined(separator: ", ")) are"
    }
}
