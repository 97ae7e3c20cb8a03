import CGStreamer

/// A `webrtcbin` (gstreamer1.0-plugins-bad) driven through its signals and properties: the description exchange,
/// ICE candidates, connection states and statistics, in Swift values.
///
/// Callbacks run on GStreamer's threads and are released when the element is finalised (at the pipeline's
/// teardown). Action signals may be emitted from any thread.
public struct WebRTCBin: Sendable {
    /// The webrtcbin element (for properties, `onPadAdded`, linking).
    public let element: Element

    public init(_ element: Element) {
        self.element = element
    }

    /// Which side of the exchange a session description is.
    public enum DescriptionType: Sendable {
        case offer, answer

        var gst: gint {
            switch self {
            case .offer: gint(CGST_WEBRTC_SDP_TYPE_OFFER.rawValue)
            case .answer: gint(CGST_WEBRTC_SDP_TYPE_ANSWER.rawValue)
            }
        }

        var field: String {
            switch self {
            case .offer: "offer"
            case .answer: "answer"
            }
        }
    }

    /// The connection changes a peer acts on.
    public enum StateChange: Sendable, Equatable {
        /// Every local candidate has been announced.
        case iceGatheringComplete
        /// No candidate pair worked.
        case iceConnectionFailed
        /// ICE or DTLS failed.
        case connectionFailed
        /// ICE and DTLS are up.
        case connected
    }

    // MARK: - Set-up

    /// Keeps the ICE agent to UDP (browsers and aiortc on a LAN use UDP; TCP candidates only add noise) and, when
    /// `allowUPnP` is false, stops libnice from asking the router to open ports (it does by default).
    public func restrictICE(udpOnly: Bool, allowUPnP: Bool) {
        guard let ice = cgst_object_get_object(element.pointer, "ice-agent") else { return }
        defer { g_object_unref(ice) }
        if udpOnly, cgst_object_has_property(ice, "ice-tcp") != 0 { cgst_object_set_bool(ice, "ice-tcp", 0) }
        if let agent = cgst_object_get_object(ice, "agent") {
            if cgst_object_has_property(agent, "upnp") != 0 { cgst_object_set_bool(agent, "upnp", allowUPnP ? 1 : 0) }
            g_object_unref(agent)
        }
    }

    /// Gathers host candidates on `address` only (an address of this machine); false if libnice refuses it.
    public func addLocalAddress(_ address: String) -> Bool {
        cgst_webrtc_add_local_ip_address(element.pointer, address) != 0
    }

    /// Links `last` (the end of an RTP branch) to a new sink pad: a new transceiver (m-line) that only sends.
    public func linkSendOnly(from last: Element, what: String) throws(GStreamerError) {
        guard let sink = element.requestPad("sink_%u") else {
            throw GStreamerError(code: .pipeline, message: "webrtcbin refused a sink pad")
        }
        guard let source = last.staticPad("src") else {
            throw GStreamerError(code: .pipeline, message: "\(what) has no source pad")
        }
        guard source.link(to: sink) else {
            throw GStreamerError(code: .pipeline, message: "GStreamer could not link \(what) to webrtcbin")
        }
        if let transceiver = cgst_object_get_object(sink.pointer, "transceiver") {
            gst_util_set_object_arg(transceiver.assumingMemoryBound(to: GObject.self), "direction", "sendonly")
            g_object_unref(transceiver)
        }
    }

    // MARK: - Signals

    /// webrtcbin wants a (new) offer: a sender creates it here.
    public func onNegotiationNeeded(_ body: @escaping @Sendable () -> Void) {
        let handler: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, context in
            guard let context else { return }
            Unmanaged<Callback<Void>>.fromOpaque(context).takeUnretainedValue().body(())
        }
        element.connect(
            "on-negotiation-needed", unsafeBitCast(handler, to: GCallback.self), Callback<Void> { _ in body() })
    }

    /// A local ICE candidate for media line `mlineIndex` (SDP `candidate:` text).
    public func onICECandidate(_ body: @escaping @Sendable (_ mlineIndex: Int, _ candidate: String) -> Void) {
        let handler:
            @convention(c) (UnsafeMutablePointer<GstElement>?, guint, UnsafeMutablePointer<gchar>?, gpointer?) -> Void =
                {
                    _, mline, candidate, context in
                    guard let candidate, let context else { return }
                    Unmanaged<Callback<(Int, String)>>.fromOpaque(context).takeUnretainedValue()
                        .body((Int(mline), String(cString: candidate)))
                }
        element.connect(
            "on-ice-candidate", unsafeBitCast(handler, to: GCallback.self), Callback<(Int, String)> { body($0.0, $0.1) }
        )
    }

    /// An element webrtcbin created inside itself (its DTLS decoders, for one).
    public func onElementAdded(_ body: @escaping @Sendable (Element) -> Void) {
        let handler:
            @convention(c) (
                UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstElement>?,
                gpointer?
            ) -> Void = { _, _, element, context in
                guard let element, let context else { return }
                Unmanaged<Callback<Element>>.fromOpaque(context).takeUnretainedValue().body(Element(element))
            }
        element.connect("deep-element-added", unsafeBitCast(handler, to: GCallback.self), Callback(body))
    }

    /// The ICE gathering, ICE connection and peer connection changes a peer acts on (others are not reported).
    public func onStateChange(_ body: @escaping @Sendable (StateChange) -> Void) {
        let handler: @convention(c) (gpointer?, UnsafeMutablePointer<GParamSpec>?, gpointer?) -> Void = {
            object, spec, context in
            guard let object, let context else { return }
            let property = String(cString: cgst_param_spec_name(spec))
            let value = cgst_object_get_enum(object, property)
            let change: StateChange? =
                switch property {
                case "ice-gathering-state" where value == gint(CGST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue):
                    .iceGatheringComplete
                case "ice-connection-state" where value == gint(CGST_WEBRTC_ICE_CONNECTION_STATE_FAILED.rawValue):
                    .iceConnectionFailed
                case "connection-state" where value == gint(CGST_WEBRTC_PEER_CONNECTION_STATE_FAILED.rawValue):
                    .connectionFailed
                case "connection-state" where value == gint(CGST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED.rawValue):
                    .connected
                default: nil
                }
            guard let change else { return }
            Unmanaged<Callback<StateChange>>.fromOpaque(context).takeUnretainedValue().body(change)
        }
        for property in ["ice-gathering-state", "ice-connection-state", "connection-state"] {
            element.connect("notify::\(property)", unsafeBitCast(handler, to: GCallback.self), Callback(body))
        }
    }

    // MARK: - Descriptions and candidates

    /// Asks webrtcbin for an offer or answer; `completion` gets its SDP text, or why there is none (on a
    /// GStreamer thread, exactly once, also if the pipeline stops first).
    public func create(
        _ type: DescriptionType, _ completion: @escaping @Sendable (Result<String, DescriptionError>) -> Void
    ) {
        let field = type.field
        let promise = PromiseHandler.make { reply in
            completion(Self.description(in: reply, field: field))
        }
        switch type {
        case .offer: cgst_webrtc_create_offer(element.pointer, promise)
        case .answer: cgst_webrtc_create_answer(element.pointer, promise)
        }
        gst_promise_unref(promise)
    }

    /// Why webrtcbin gave no description, or refused one.
    public struct DescriptionError: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    private static func description(in reply: PromiseHandler.Reply, field: String) -> Result<String, DescriptionError> {
        guard case .replied(let structure) = reply else { return .failure(DescriptionError(reason: reply.failure)) }
        guard let structure, let value = gst_structure_get_value(structure, field),
            let boxed = g_value_get_boxed(value)
        else {
            return .failure(DescriptionError(reason: PromiseHandler.errorText(structure) ?? "no \(field)"))
        }
        let description = boxed.assumingMemoryBound(to: CGstWebRTCSessionDescription.self)
        guard let text = gst_sdp_message_as_text(description.pointee.sdp) else {
            return .failure(DescriptionError(reason: "the \(field) cannot be printed"))
        }
        defer { g_free(text) }
        return .success(String(cString: text))
    }

    /// The number of media sections of an SDP text; nil when it is not valid SDP.
    public static func mediaSectionCount(in sdp: String) -> Int? {
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(sdp, &message) == GST_SDP_OK, let message else { return nil }
        defer { gst_sdp_message_free(message) }
        return Int(gst_sdp_message_medias_len(message))
    }

    /// Sets our own description (this starts ICE gathering).
    ///
    /// - Throws: ``GStreamerError/Code/pipeline`` if the text is not valid SDP.
    public func setLocalDescription(_ type: DescriptionType, _ sdp: String) throws(GStreamerError) {
        try withDescription(type, sdp) { description in
            cgst_webrtc_set_local_description(element.pointer, description, nil)
        }
    }

    /// Sets the remote description; `completion` gets nil once webrtcbin accepted it, else why it refused (on a
    /// GStreamer thread, exactly once).
    ///
    /// - Throws: ``GStreamerError/Code/pipeline`` if the text is not valid SDP (`completion` is then not called).
    public func setRemoteDescription(
        _ type: DescriptionType,
        _ sdp: String,
        _ completion: @escaping @Sendable (DescriptionError?) -> Void
    ) throws(GStreamerError) {
        try withDescription(type, sdp) { description in
            let promise = PromiseHandler.make { reply in
                switch reply {
                case .replied(let structure): completion(PromiseHandler.errorText(structure).map(DescriptionError.init))
                default: completion(DescriptionError(reason: reply.failure))
                }
            }
            cgst_webrtc_set_remote_description(element.pointer, description, promise)
            gst_promise_unref(promise)
        }
    }

    private func withDescription(
        _ type: DescriptionType,
        _ sdp: String,
        _ body: (UnsafeMutablePointer<CGstWebRTCSessionDescription>) -> Void
    ) throws(GStreamerError) {
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(sdp, &message) == GST_SDP_OK, let message else {
            throw GStreamerError(code: .pipeline, message: "the \(type.field) is not valid SDP")
        }
        defer { gst_sdp_message_free(message) }
        var description = CGstWebRTCSessionDescription(type: type.gst, sdp: message)
        body(&description)
    }

    /// A remote candidate for media line `mlineIndex`; an empty candidate ends them (webrtcbin 1.22).
    public func addICECandidate(mlineIndex: Int, _ candidate: String) {
        cgst_webrtc_add_ice_candidate(element.pointer, guint(clamping: max(0, mlineIndex)), candidate)
    }

    // MARK: - Statistics

    /// One entry of webrtcbin's statistics (RTCStats): its type's nick ("remote-inbound-rtp", "outbound-rtp", …)
    /// and its numeric fields.
    public struct StatisticsEntry: Sendable, Hashable {
        public var type: String?
        public var numbers: [String: Double]
    }

    /// Asks for the statistics of the stream behind `pad` (a sink pad of webrtcbin); `completion` gets the
    /// entries, or nil if webrtcbin gave none (on a GStreamer thread, exactly once).
    public func requestStatistics(for pad: Pad, _ completion: @escaping @Sendable ([StatisticsEntry]?) -> Void) {
        let promise = PromiseHandler.make { reply in
            guard case .replied(let structure?) = reply else { return completion(nil) }
            completion(Self.entries(in: structure))
        }
        defer { gst_promise_unref(promise) }
        // g_signal_emit_by_name(webrtc, "get-stats", pad, promise), through g_signal_emitv (not variadic).
        let type = gst_element_factory_get_element_type(gst_element_get_factory(element.pointer))
        let signal = g_signal_lookup("get-stats", type)
        guard signal != 0 else { return }
        var arguments = [GValue](repeating: GValue(), count: 3)
        g_value_init(&arguments[0], type)
        g_value_set_object(&arguments[0], UnsafeMutableRawPointer(element.pointer))
        g_value_init(&arguments[1], gst_pad_get_type())
        g_value_set_object(&arguments[1], UnsafeMutableRawPointer(pad.pointer))
        g_value_init(&arguments[2], gst_promise_get_type())
        g_value_set_boxed(&arguments[2], UnsafeRawPointer(promise))
        arguments.withUnsafeBufferPointer { values in
            g_signal_emitv(values.baseAddress, signal, 0, nil)
        }
        for index in arguments.indices { g_value_unset(&arguments[index]) }
    }

    private static func entries(in stats: UnsafePointer<GstStructure>) -> [StatisticsEntry] {
        var entries: [StatisticsEntry] = []
        for index in 0..<max(0, gst_structure_n_fields(stats)) {
            guard let name = gst_structure_nth_field_name(stats, guint(index)),
                let value = gst_structure_get_value(stats, name), value.pointee.g_type == gst_structure_get_type(),
                let entry = gst_value_get_structure(value)
            else { continue }
            var numbers: [String: Double] = [:]
            for field in 0..<max(0, gst_structure_n_fields(entry)) {
                guard let fieldName = gst_structure_nth_field_name(entry, guint(field)),
                    let number = number(entry, fieldName)
                else { continue }
                numbers[String(cString: fieldName)] = number
            }
            entries.append(StatisticsEntry(type: typeNick(entry), numbers: numbers))
        }
        return entries
    }

    /// The nick of an entry's `type` enum.
    private static func typeNick(_ entry: UnsafePointer<GstStructure>) -> String? {
        guard let value = gst_structure_get_value(entry, "type"),
            let enumClass = g_type_class_ref(value.pointee.g_type)
        else { return nil }
        defer { g_type_class_unref(enumClass) }
        guard
            let nick = g_enum_get_value(enumClass.assumingMemoryBound(to: GEnumClass.self), g_value_get_enum(value))?
                .pointee.value_nick
        else { return nil }
        return String(cString: nick)
    }

    /// A field of any GLib number type, as a finite Double (enums and strings are not numbers here).
    private static func number(_ entry: UnsafePointer<GstStructure>, _ field: UnsafePointer<gchar>) -> Double? {
        guard let value = gst_structure_get_value(entry, field) else { return nil }
        let doubleType = g_type_from_name("gdouble")
        let type = value.pointee.g_type
        guard g_type_fundamental(type) != g_type_fundamental(g_type_from_name("GEnum")),
            g_value_type_transformable(type, doubleType) != 0
        else { return nil }
        var converted = GValue()
        g_value_init(&converted, doubleType)
        defer { g_value_unset(&converted) }
        guard g_value_transform(value, &converted) != 0 else { return nil }
        let number = g_value_get_double(&converted)
        return number.isFinite ? number : nil
    }
}
