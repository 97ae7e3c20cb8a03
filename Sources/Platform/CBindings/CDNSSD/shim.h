// C binding for the DNS-SD API (dns_sd.h). On Linux the header and libdns_sd come from Avahi's compatibility
// layer (Debian: libavahi-compat-libdnssd-dev; include path from pkg-config `avahi-compat-libdns_sd`).
// Only the ServiceDiscovery module imports this.
#ifndef CDNSSD_SHIM_H
#define CDNSSD_SHIM_H

#include <stdlib.h>
#include <dns_sd.h>

/// Silences the "application uses the Bonjour compatibility layer of Avahi" warning Avahi prints on first use.
/// Must run before the first DNSService* call; never overrides a value the user set.
static inline void cdnssd_silence_avahi_compat_warning(void) {
    setenv("AVAHI_COMPAT_NOWARN", "1", 0);
}

/// kDNSServiceErr_NoError as the function result type (the enum constant imports as a plain Int).
static inline DNSServiceErrorType cdnssd_no_error(void) { return kDNSServiceErr_NoError; }

/// kDNSServiceFlagsAdd, typed.
static inline DNSServiceFlags cdnssd_flags_add(void) { return kDNSServiceFlagsAdd; }

/// kDNSServiceFlagsMoreComing, typed.
static inline DNSServiceFlags cdnssd_flags_more_coming(void) { return kDNSServiceFlagsMoreComing; }

#endif
