#!/usr/bin/env python3
"""An app's first contact with argus-hub over TLS, from Python's ssl module (OpenSSL): an implementation nobody here
wrote, pinning the hub's certificate as the app does.

    tls_probe.py --host 127.0.0.1 --port P --fingerprint HEX

1. TLS 1.3 without a CA (the hub's certificate is its own): the handshake completes, the SHA-256 of the
   certificate's DER bytes equals --fingerprint (what the app pins), and GET /health answers 200 with "ok".
2. A client limited to TLS 1.2 is refused during the handshake.

Prints one JSON line: {"ok": true, "version": "TLSv1.3", "cipher": ..., "key": ..., "pinned": true,
"tls12_refused": true, "health": 200}; exit status 0 when all of it holds, 1 otherwise.
"""

import argparse
import hashlib
import json
import socket
import ssl
import sys


def context(maximum=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False  # the app checks the pin instead of a CA and a name
    ctx.verify_mode = ssl.CERT_NONE
    if maximum is None:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    else:
        ctx.maximum_version = maximum
    return ctx


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--fingerprint", required=True)
    args = ap.parse_args()
    out = {"ok": False}
    with socket.create_connection((args.host, args.port), timeout=10) as raw:
        with context().wrap_socket(raw, server_hostname="argus-hub") as tls:
            der = tls.getpeercert(binary_form=True)
            out["version"] = tls.version()
            out["cipher"] = tls.cipher()[0]
            out["pinned"] = hashlib.sha256(der).hexdigest() == args.fingerprint.lower()
            tls.sendall(b"GET /health HTTP/1.1\r\nHost: argus-hub\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := tls.recv(65536):
                answer += chunk
    status_line = answer.split(b"\r\n", 1)[0].decode()
    out["health"] = int(status_line.split()[1]) if len(status_line.split()) > 1 else None
    out["health_ok"] = b'"ok"' in answer
    try:
        with socket.create_connection((args.host, args.port), timeout=10) as raw:
            with context(ssl.TLSVersion.TLSv1_2).wrap_socket(raw, server_hostname="argus-hub"):
                out["tls12_refused"] = False
    except (ssl.SSLError, ConnectionResetError) as error:
        out["tls12_refused"] = True
        out["tls12_error"] = type(error).__name__
    out["ok"] = (out["version"] == "TLSv1.3" and out["pinned"] and out["health"] == 200 and out["health_ok"]
                 and out["tls12_refused"])
    print(json.dumps(out), flush=True)
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
