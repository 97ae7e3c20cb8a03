// C binding for libdbus-1 (Debian: libdbus-1-dev; include paths from pkg-config `dbus-1`).
// Only the DesktopNotifications module imports this. The type codes are `#define`s with casts that Swift does not
// import, so they are wrapped here as typed static-inline functions.
#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H

#include <dbus/dbus.h>

static inline int cdbus_type_invalid(void) { return DBUS_TYPE_INVALID; }
static inline int cdbus_type_byte(void) { return DBUS_TYPE_BYTE; }
static inline int cdbus_type_boolean(void) { return DBUS_TYPE_BOOLEAN; }
static inline int cdbus_type_int32(void) { return DBUS_TYPE_INT32; }
static inline int cdbus_type_uint32(void) { return DBUS_TYPE_UINT32; }
static inline int cdbus_type_string(void) { return DBUS_TYPE_STRING; }
static inline int cdbus_type_array(void) { return DBUS_TYPE_ARRAY; }
static inline int cdbus_type_variant(void) { return DBUS_TYPE_VARIANT; }
static inline int cdbus_type_dict_entry(void) { return DBUS_TYPE_DICT_ENTRY; }

#endif
