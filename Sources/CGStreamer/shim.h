#ifndef CRIBCALL_CGSTREAMER_SHIM_H
#define CRIBCALL_CGSTREAMER_SHIM_H

// GStreamer 1.22 (Debian 12) for Swift: core + app (appsink/appsrc). One C module for every GStreamer user in
// the package (audio capture now, webrtcbin streaming next: add its headers, pkg-config names and shims here).
//
// Swift imports neither C variadic functions (g_object_set/get, g_signal_emit_by_name, gst_caps_new_simple, ...)
// nor function-like macros (GST_BIN(), GST_MESSAGE_TYPE(), g_signal_connect, GST_SECOND, ...). They are wrapped
// here in prefixed (cgst_) static inline functions, compiled by the Clang importer into the Swift module. Nothing
// else lives here: all logic is in the Swift adapters.

#include <gst/gst.h>
#include <gst/app/gstappsink.h>

// --- time constants (macros) ---
static const GstClockTime cgst_millisecond = GST_MSECOND;
static const GstClockTime cgst_second = GST_SECOND;
static const GstClockTime cgst_clock_time_none = GST_CLOCK_TIME_NONE;

// --- casts (GObject type-check macros) ---
static inline GstObject *cgst_object(gpointer object) { return GST_OBJECT(object); }
static inline GstBin *cgst_bin(GstElement *element) { return GST_BIN(element); }
static inline GstElement *cgst_element(gpointer object) { return GST_ELEMENT(object); }
static inline GstAppSink *cgst_app_sink(GstElement *element) { return GST_APP_SINK(element); }
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

#endif
