#ifndef CRIBCALL_CNGTCP2_SHIM_H
#define CRIBCALL_CNGTCP2_SHIM_H

// ngtcp2 0.12 (Debian 12) + GnuTLS 3.7 for Swift. ngtcp2's main entry points are function-like macros over
// *_versioned() functions and its logger is variadic; Swift imports neither, so they are wrapped here in
// prefixed static inline functions. Nothing else lives here: all logic is in the QUIC module.

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>

static const uint32_t cribcall_ngtcp2_proto_ver_v1 = NGTCP2_PROTO_VER_V1;
static const uint64_t cribcall_ngtcp2_milliseconds = NGTCP2_MILLISECONDS;

static inline void cribcall_ngtcp2_log_stderr(void *user_data, const char *format, ...) {
    va_list arguments;
    (void)user_data;
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fputc('\n', stderr);
}

static inline void cribcall_ngtcp2_settings_default(ngtcp2_settings *settings, int log) {
    ngtcp2_settings_default(settings);
    if (log) {
        settings->log_printf = cribcall_ngtcp2_log_stderr;
    }
}

static inline void cribcall_ngtcp2_transport_params_default(ngtcp2_transport_params *params) {
    ngtcp2_transport_params_default(params);
}

static inline int cribcall_ngtcp2_conn_server_new(ngtcp2_conn **pconn, const ngtcp2_cid *dcid,
                                                  const ngtcp2_cid *scid, const ngtcp2_path *path,
                                                  uint32_t version, const ngtcp2_callbacks *callbacks,
                                                  const ngtcp2_settings *settings,
                                                  const ngtcp2_transport_params *params, void *user_data) {
    return ngtcp2_conn_server_new(pconn, dcid, scid, path, version, callbacks, settings, params, NULL, user_data);
}

static inline int cribcall_ngtcp2_conn_client_new(ngtcp2_conn **pconn, const ngtcp2_cid *dcid,
                                                  const ngtcp2_cid *scid, const ngtcp2_path *path,
                                                  uint32_t version, const ngtcp2_callbacks *callbacks,
                                                  const ngtcp2_settings *settings,
                                                  const ngtcp2_transport_params *params, void *user_data) {
    return ngtcp2_conn_client_new(pconn, dcid, scid, path, version, callbacks, settings, params, NULL, user_data);
}

static inline int cribcall_ngtcp2_conn_read_pkt(ngtcp2_conn *conn, const ngtcp2_path *path, const uint8_t *pkt,
                                                size_t pktlen, ngtcp2_tstamp ts) {
    ngtcp2_pkt_info info = {0};
    return ngtcp2_conn_read_pkt(conn, path, &info, pkt, pktlen, ts);
}

static inline ngtcp2_ssize cribcall_ngtcp2_conn_writev_stream(ngtcp2_conn *conn, ngtcp2_path *path, uint8_t *dest,
                                                              size_t destlen, ngtcp2_ssize *pdatalen, uint32_t flags,
                                                              int64_t stream_id, const ngtcp2_vec *datav,
                                                              size_t datavcnt, ngtcp2_tstamp ts) {
    ngtcp2_pkt_info info;
    return ngtcp2_conn_writev_stream(conn, path, &info, dest, destlen, pdatalen, flags, stream_id, datav, datavcnt,
                                     ts);
}

static inline ngtcp2_ssize cribcall_ngtcp2_conn_write_connection_close(ngtcp2_conn *conn, ngtcp2_path *path,
                                                                       uint8_t *dest, size_t destlen,
                                                                       const ngtcp2_connection_close_error *ccerr,
                                                                       ngtcp2_tstamp ts) {
    ngtcp2_pkt_info info;
    return ngtcp2_conn_write_connection_close(conn, path, &info, dest, destlen, ccerr, ts);
}

#endif
