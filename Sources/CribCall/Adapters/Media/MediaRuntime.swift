import CGStreamer

/// Process-wide GStreamer set-up and plugin checks for the media adapter.
enum MediaRuntime {
    /// `gst_init_check`, run once (a static `let` is initialised exactly once, thread-safely; `gst_init_check`
    /// itself is idempotent, so AudioCapture may call it too).
    private static let initialization: Result<Void, MediaError> = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            return .failure(
                MediaError(
                    code: .gstreamerUnavailable,
                    message: "GStreamer could not be initialised (\(reason)): "
                        + "reinstall libgstreamer1.0-0 and gstreamer1.0-plugins-base"
                )
            )
        }
        return .success(())
    }()

    /// Initialises GStreamer on first use.
    static func initialize() throws(MediaError) {
        try initialization.get()
    }

    /// The Debian package that provides each element the media pipelines use.
    static let packages: [String: String] = [
        "webrtcbin": "gstreamer1.0-plugins-bad",
        "dtlssrtpenc": "gstreamer1.0-plugins-bad",
        "dtlssrtpdec": "gstreamer1.0-plugins-bad",
        "srtpenc": "gstreamer1.0-plugins-bad",
        "srtpdec": "gstreamer1.0-plugins-bad",
        "nicesrc": "gstreamer1.0-nice",
        "nicesink": "gstreamer1.0-nice",
        "rtpbin": "gstreamer1.0-plugins-good",
        "rtpopuspay": "gstreamer1.0-plugins-good",
        "rtpopusdepay": "gstreamer1.0-plugins-good",
        "wavenc": "gstreamer1.0-plugins-good",
        "matroskamux": "gstreamer1.0-plugins-good",
        "tee": "libgstreamer1.0-0",
        "autoaudiosrc": "gstreamer1.0-plugins-good",
        "autoaudiosink": "gstreamer1.0-plugins-good",
        "pulsesrc": "gstreamer1.0-pulseaudio",
        "alsasrc": "gstreamer1.0-alsa",
        "opusenc": "gstreamer1.0-plugins-base",
        "opusdec": "gstreamer1.0-plugins-base",
        "audiotestsrc": "gstreamer1.0-plugins-base",
        "audioconvert": "gstreamer1.0-plugins-base",
        "audioresample": "gstreamer1.0-plugins-base",
        "decodebin": "gstreamer1.0-plugins-base",
        "filesrc": "libgstreamer1.0-0",
        "filesink": "libgstreamer1.0-0",
        "identity": "libgstreamer1.0-0",
        "capsfilter": "libgstreamer1.0-0",
        "queue": "libgstreamer1.0-0",
        "fakesink": "libgstreamer1.0-0",
        "videotestsrc": "gstreamer1.0-plugins-base",
        "videoconvert": "gstreamer1.0-plugins-base",
        "videoscale": "gstreamer1.0-plugins-base",
        "videorate": "gstreamer1.0-plugins-base",
        "v4l2src": "gstreamer1.0-plugins-good",
        "vp8enc": "gstreamer1.0-plugins-good",
        "vp8dec": "gstreamer1.0-plugins-good",
        "rtpvp8pay": "gstreamer1.0-plugins-good",
        "rtpvp8depay": "gstreamer1.0-plugins-good",
        "autovideosink": "gstreamer1.0-plugins-good",
        "x264enc": "gstreamer1.0-plugins-ugly",
        "rtph264pay": "gstreamer1.0-plugins-good",
        "rtph264depay": "gstreamer1.0-plugins-good",
        "h264parse": "gstreamer1.0-plugins-bad",
        "openh264dec": "gstreamer1.0-plugins-bad",
        "appsrc": "gstreamer1.0-plugins-base",
        "appsink": "gstreamer1.0-plugins-base",
    ]

    /// Whether an element factory is registered (its plugin is installed and loads).
    static func hasElement(_ factoryName: String) -> Bool {
        guard let factory = gst_element_factory_find(factoryName) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }

    /// Throws if one of the elements is not installed, naming the package to install.
    static func requireElements(_ factoryNames: [String]) throws(MediaError) {
        let missing = factoryNames.filter { !hasElement($0) }
        guard !missing.isEmpty else { return }
        throw .missingElements(missing)
    }
}

extension MediaError {
    /// GStreamer elements that are not installed.
    static func missingElements(_ names: [String]) -> MediaError {
        var packages: [String] = []
        for name in names {
            let package = MediaRuntime.packages[name] ?? "the GStreamer plugin providing \(name)"
            if !packages.contains(package) { packages.append(package) }
        }
        let elements = names.count == 1 ? "element \(names[0]) is" : "elements \(names.joined(separator: ", ")) are"
        return MediaError(
            code: .missingPlugin,
            message: "the GStreamer \(elements) not installed, so WebRTC streaming cannot work: install "
                + "\(packages.joined(separator: " and ")) (apt-get install \(packages.joined(separator: " ")))"
        )
    }
}
