import GStreamer

extension MediaError {
    /// GStreamer that does not initialise, elements that are not installed, a pipeline it cannot assemble.
    init(_ error: GStreamerError) {
        switch error.code {
        case .unavailable:
            self.init(code: .gstreamerUnavailable, message: error.message)
        case .missingElements:
            let packages = error.missing?.packages ?? []
            self.init(
                code: .missingPlugin,
                message: "the GStreamer \(error.missing?.subject ?? "elements are") not installed, so WebRTC "
                    + "streaming cannot work: install \(packages.joined(separator: " and ")) "
                    + "(apt-get install \(packages.joined(separator: " ")))"
            )
        default:
            self.init(code: .pipelineFailed, message: error.message)
        }
    }

    /// Initialises GStreamer and checks that `elements` are installed.
    ///
    /// - Throws: ``MediaError/Code/gstreamerUnavailable``, or ``MediaError/Code/missingPlugin`` naming the Debian
    ///   packages to install.
    static func requireGStreamer(_ elements: [String] = []) throws(MediaError) {
        do {
            try GStreamer.requireElements(elements)
        } catch {
            throw MediaError(error)
        }
    }
}
