#ifndef CRIBCALL_CGSTREAMER_SHIM_H
#define CRIBCALL_CGSTREAMER_SHIM_H

// GStreamer 1.22 (Debian 12) for Swift: core + app (appsink/appsrc) + sdp, and webrtcbin through its signals.
// One C module for GStreamer, used only by the GStreamer adapter (Sources/Platform/Adapters/GStreamer): add
// headers and shims here.
//
// Swift imports neither C variadic functions (g_object_set/get, g_signal_emit_by_name, gst_caps_new_simple, ...)
// nor function-like macros (GST_BIN(), GST_MESSAGE_TYPE(), g_signal_connect, GST_SECOND, ...). They are wrapped
// here in prefixed (cgst_) static inline functions, compiled by the Clang importer into the Swift module. Nothing
// else lives here: all logic is in the Swift adapters.

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/sdp/sdp.h>

// --- time constants (macros) ---
static const GstClockTime cgst_millisecond = GST_MSECOND;
static const GstClockTime cgst_second = GST_SECOND;
static const GstClockTime cgst_clock_time_none = GST_CLOCK_TIME_NONE;

// --- casts (GObject type-check macros) ---
static inline GstObject *cgst_object(gpointer object) { return GST_OBJECT(object); }
static inline GstBin *cgst_bin(GstElement *element) { return GST_BIN(element); }
static inline GstElement *cgst_element(gpointer object) { return GST_ELEMENT(object); }
static inline GstAppSink *cgst_app_sink(GstElement *element) { return GST_APP_SINK(element); }
static inline GstAppSrc *cgst_app_src(GstElement *element) { return GST_APP_SRC(element); }
static inline GstBaseSink *cgst_base_sink(GstElement *element) { return GST_BASE_SINK(element); }

// --- g_object_set / g_object_get (variadic), one property at a time ---
static inline void cgst_object_set_string(gpointer object, const gchar *property, const gchar *value) {
    g_object_set(object, property, value, NULL);
}
static inline void cgst_object_set_bool(gpointer object, const gchar *property, gboolean value) {
    g_object_set(object, property, value, NULL);
}
static inline void cgst_object_set_int(gpointer object, const gchar *property, gint value) {
    g_object_set(object, property, value, NULL);
}
static inline void cgst_object_set_uint(gpointer object, const gchar *property, guint value) {
    g_object_set(object, property, value, NULL);
}
static inline void cgst_object_set_int64(gpointer object, const gchar *property, gint64 value) {
    g_object_set(object, property, value, NULL);
}
static inline void cgst_object_set_uint64(gpointer object, const gchar *property, guint64 value) {
    g_object_set(object, property, value, NULL);
}
static inline void cgst_object_set_enum(gpointer object, const gchar *property, gint value) {
    g_object_set(object, property, value, NULL);
}
static inline gint cgst_object_get_enum(gpointer object, const gchar *property) {
    gint value = -1;
    g_object_get(object, property, &value, NULL);
    return value;
}
/// Returns a newly allocated string (free with g_free) or NULL.
static inline gchar *cgst_object_dup_string(gpointer object, const gchar *property) {
    gchar *value = NULL;
    g_object_get(object, property, &value, NULL);
    return value;
}

// --- signals (g_signal_connect is a macro) ---
/// Connects a handler whose C signature must match the signal exactly (cast to GCallback by the caller).
/// `destroy` runs when the handler is disconnected or the instance is finalized: release `data` there.
static inline gulong cgst_signal_connect(gpointer instance, const gchar *signal, GCallback handler, gpointer data,
                                         GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

// --- GValue inspection (G_VALUE_HOLDS_* and GST_VALUE_HOLDS_* are macros), for element messages' structures ---
static inline gboolean cgst_value_holds_int(const GValue *value) { return G_VALUE_HOLDS_INT(value); }
static inline gboolean cgst_value_holds_uint(const GValue *value) { return G_VALUE_HOLDS_UINT(value); }
static inline gboolean cgst_value_holds_int64(const GValue *value) { return G_VALUE_HOLDS_INT64(value); }
static inline gboolean cgst_value_holds_uint64(const GValue *value) { return G_VALUE_HOLDS_UINT64(value); }
static inline gboolean cgst_value_holds_double(const GValue *value) { return G_VALUE_HOLDS_DOUBLE(value); }
static inline gboolean cgst_value_holds_boolean(const GValue *value) { return G_VALUE_HOLDS_BOOLEAN(value); }
static inline gboolean cgst_value_holds_string(const GValue *value) { return G_VALUE_HOLDS_STRING(value); }
static inline gboolean cgst_value_holds_list(const GValue *value) { return GST_VALUE_HOLDS_LIST(value); }
static inline gboolean cgst_value_holds_structure(const GValue *value) { return GST_VALUE_HOLDS_STRUCTURE(value); }

// --- messages (accessor macros) ---
static inline GstMessageType cgst_message_type(GstMessage *message) { return GST_MESSAGE_TYPE(message); }
static inline const gchar *cgst_message_type_name(GstMessage *message) { return GST_MESSAGE_TYPE_NAME(message); }
static inline GstObject *cgst_message_src(GstMessage *message) { return GST_MESSAGE_SRC(message); }
/// The name of the object that posted the message ("" if none); valid while the message is alive.
static inline const gchar *cgst_message_src_name(GstMessage *message) {
    GstObject *source = GST_MESSAGE_SRC(message);
    return source ? GST_OBJECT_NAME(source) : "";
}

// --- elements ---
/// The factory name of an element ("pulsesrc", "webrtcbin", ...), "" if it has none.
static inline const gchar *cgst_element_factory_name(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) : "";
}
static inline const gchar *cgst_object_name(gpointer object) { return GST_OBJECT_NAME(object); }

// --- webrtcbin (gstreamer1.0-plugins-bad), without its development headers ---
// libgstreamer-plugins-bad1.0-dev (the only package with <gst/webrtc/webrtc.h>) pulls ~650 MiB (OpenCV, GTK...).
// webrtcbin is driven through signals and properties only, which needs no libgstwebrtc symbol; the two facts
// taken from the header are below, copied from Debian 12's libgstreamer-plugins-bad1.0-dev 1.22.0-4+deb12u8
// (gst/webrtc/rtcsessiondescription.h, gst/webrtc/webrtc_fwd.h) and checked there with static asserts.

/// `GstWebRTCSessionDescription` (a boxed type): `{ GstWebRTCSDPType type; GstSDPMessage *sdp; }`.
typedef struct {
    gint type;
    GstSDPMessage *sdp;
} CGstWebRTCSessionDescription;

/// `GstWebRTCSDPType`.
typedef enum {
    CGST_WEBRTC_SDP_TYPE_OFFER = 1,
    CGST_WEBRTC_SDP_TYPE_PRANSWER = 2,
    CGST_WEBRTC_SDP_TYPE_ANSWER = 3,
    CGST_WEBRTC_SDP_TYPE_ROLLBACK = 4,
} CGstWebRTCSDPType;

/// `GstWebRTCICEConnectionState` (webrtcbin's `ice-connection-state`).
typedef enum {
    CGST_WEBRTC_ICE_CONNECTION_STATE_NEW = 0,
    CGST_WEBRTC_ICE_CONNECTION_STATE_CHECKING = 1,
    CGST_WEBRTC_ICE_CONNECTION_STATE_CONNECTED = 2,
    CGST_WEBRTC_ICE_CONNECTION_STATE_COMPLETED = 3,
    CGST_WEBRTC_ICE_CONNECTION_STATE_FAILED = 4,
    CGST_WEBRTC_ICE_CONNECTION_STATE_DISCONNECTED = 5,
    CGST_WEBRTC_ICE_CONNECTION_STATE_CLOSED = 6,
} CGstWebRTCICEConnectionState;

/// `GstWebRTCICEGatheringState` (webrtcbin's `ice-gathering-state`).
typedef enum {
    CGST_WEBRTC_ICE_GATHERING_STATE_NEW = 0,
    CGST_WEBRTC_ICE_GATHERING_STATE_GATHERING = 1,
    CGST_WEBRTC_ICE_GATHERING_STATE_COMPLETE = 2,
} CGstWebRTCICEGatheringState;

/// `GstWebRTCPeerConnectionState` (webrtcbin's `connection-state`: ICE and DTLS together).
typedef enum {
    CGST_WEBRTC_PEER_CONNECTION_STATE_NEW = 0,
    CGST_WEBRTC_PEER_CONNECTION_STATE_CONNECTING = 1,
    CGST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED = 2,
    CGST_WEBRTC_PEER_CONNECTION_STATE_DISCONNECTED = 3,
    CGST_WEBRTC_PEER_CONNECTION_STATE_FAILED = 4,
    CGST_WEBRTC_PEER_CONNECTION_STATE_CLOSED = 5,
} CGstWebRTCPeerConnectionState;

/// webrtcbin's action signal "create-offer" / "create-answer" (options NULL); the promise gets the reply.
static inline void cgst_webrtc_create_offer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
}
static inline void cgst_webrtc_create_answer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-answer", NULL, promise);
}
/// "set-local-description" / "set-remote-description": webrtcbin copies the description (a boxed type), so it
/// may live on the caller's stack. `promise` may be NULL.
static inline void cgst_webrtc_set_local_description(GstElement *webrtc, const CGstWebRTCSessionDescription *description,
                                                     GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "set-local-description", description, promise);
}
static inline void cgst_webrtc_set_remote_description(GstElement *webrtc,
                                                      const CGstWebRTCSessionDescription *description,
                                                      GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "set-remote-description", description, promise);
}
/// "add-ice-candidate": a remote candidate ("candidate:..." line) for media line `mline_index`.
static inline void cgst_webrtc_add_ice_candidate(GstElement *webrtc, guint mline_index, const gchar *candidate) {
    g_signal_emit_by_name(webrtc, "add-ice-candidate", mline_index, candidate);
}
/// Emits "add-local-ip-address" on webrtcbin's ICE agent: libnice then gathers host candidates on the given
/// addresses only (and includes loopback, which it skips by default). Call before gathering starts.
static inline gboolean cgst_webrtc_add_local_ip_address(GstElement *webrtc, const gchar *address) {
    GObject *ice = NULL;
    gboolean added = FALSE;
    g_object_get(webrtc, "ice-agent", &ice, NULL);
    if (!ice) return FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", address, &added);
    g_object_unref(ice);
    return added;
}

// --- more g_object_get / signals for the WebRTC adapter ---
/// Returns a new reference (release with g_object_unref / gst_object_unref) or NULL.
static inline gpointer cgst_object_get_object(gpointer object, const gchar *property) {
    gpointer value = NULL;
    g_object_get(object, property, &value, NULL);
    return value;
}
static inline guint cgst_object_get_uint(gpointer object, const gchar *property) {
    guint value = 0;
    g_object_get(object, property, &value, NULL);
    return value;
}
static inline const gchar *cgst_param_spec_name(GParamSpec *spec) { return spec ? spec->name : ""; }
static inline gboolean cgst_object_has_property(gpointer object, const gchar *property) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), property) != NULL;
}

#endif
