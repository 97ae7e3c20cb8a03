import CGStreamer

/// Process-wide GStreamer set-up and plugin checks.
enum GStreamerRuntime {
    /// The result of `gst_init_check`, run once: Swift initialises a static `let` exactly once, thread-safely
    /// (and `gst_init_check` itself is idempotent and locked, so other modules may call it as well).
    private static let initialization: Result<Void, AudioCaptureError> = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            return .failure(
                AudioCaptureError(
                    code: .gstreamerUnavailable,
                    message: "GStreamer could not be initialised (\(reason)): "
                        + "reinstall libgstreamer1.0-0 and gstreamer1.0-plugins-base"
                )
            )
        }
        return .success(())
    }()

    /// Initialises GStreamer on first use.
    ///
    /// - Throws: ``AudioCaptureError/Code/gstreamerUnavailable`` if `gst_init_check` fails.
    static func initialize() throws(AudioCaptureError) {
        try initialization.get()
    }

    /// The Debian package that provides each element the capture pipelines use.
    static let packages: [String: String] = [
        "autoaudiosrc": "gstreamer1.0-plugins-good",
        "pulsesrc": "gstreamer1.0-pulseaudio",
        "alsasrc": "gstreamer1.0-alsa",
        "filesrc": "libgstreamer1.0-0",
        "decodebin": "gstreamer1.0-plugins-base",
        "audioconvert": "gstreamer1.0-plugins-base",
        "audioresample": "gstreamer1.0-plugins-base",
        "appsink": "gstreamer1.0-plugins-base",
    ]

    /// Whether an element factory is registered (its plugin is installed and loads).
    static func hasElement(_ factoryName: String) -> Bool {
        guard let factory = gst_element_factory_find(factoryName) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }

    /// Throws if one of the elements is not installed, naming the package to install.
    ///
    /// - Throws: ``AudioCaptureError/Code/missingPlugin``.
    static func requireElements(_ factoryNames: [String]) throws(AudioCaptureError) {
        let missing = factoryNames.filter { !hasElement($0) }
        guard !missing.isEmpty else { return }
        throw .missingElements(missing)
    }
}

extension AudioCaptureError {
    /// GStreamer elements that are not installed.
    static func missingElements(_ names: [String]) -> AudioCaptureError {
        var packages: [String] = []
        for name in names {
            let package = GStreamerRuntime.packages[name] ?? "the GStreamer plugin providing \(name)"
            if !packages.contains(package) { packages.append(package) }
        }
        let elements = names.count == 1 ? "element \(names[0]) is" : "elements \(names.joined(separator: ", ")) are"
        return AudioCaptureError(
            code: .missingPlugin,
            message: "the GStreamer \(elements) not installed: install \(packages.joined(separator: " and "))"
                + " (e.g. apt-get install \(packages.joined(separator: " ")))"
        )
    }
}
