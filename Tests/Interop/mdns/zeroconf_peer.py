#!/usr/bin/env python3
"""Independent mDNS/DNS-SD peer for the discovery tests, built on python-zeroconf (pinned in the Makefile).

It speaks mDNS itself (no Avahi), so tests run it in a network namespace of its own.

  zeroconf_peer.py browse --type _bemyears._tcp.local. [--type ...] --seconds S
      one JSON line per add/update/remove, with the resolved TXT and addresses
  zeroconf_peer.py register --name NAME --type _homeapps-test._udp.local. [--type ...] --port P --address IP
                            [--txt KEY=VALUE | --txt KEY ...] [--seconds S]
      registers the instance under each type with the TXT entries in order (a bare KEY is a boolean attribute),
      prints {"event":"registered"}, then after S seconds (or on SIGTERM) unregisters and prints
      {"event":"unregistered"}
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf

def emit(**fields: object) -> None:
    print(json.dumps(fields, sort_keys=True), flush=True)


def browse(args: argparse.Namespace) -> None:
    zc = Zeroconf(ip_version=IPVersion.V4Only)

    def on_change(zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Removed:
            emit(event="remove", type=service_type, name=name)
            return
        info = zeroconf.get_service_info(service_type, name, timeout=3000)
        if info is None:
            emit(event="unresolved", type=service_type, name=name)
            return
        txt = {
            key.decode("utf-8", "replace"): (value.decode("utf-8", "replace") if value is not None else None)
            for key, value in info.properties.items()
        }
        emit(
            event="add" if state_change is ServiceStateChange.Added else "update",
            type=service_type,
            name=name,
            port=info.port,
            server=info.server,
            addresses=info.parsed_addresses(),
            txt=txt,
        )

    browsers = [ServiceBrowser(zc, service_type, handlers=[on_change]) for service_type in args.type]
    emit(event="ready")  # browsing: the test's deadlines for what it should find start now
    threading.Event().wait(args.seconds)
    for browser in browsers:
        browser.cancel()
    zc.close()
    emit(event="done")


def register(args: argparse.Namespace) -> None:
    zc = Zeroconf(ip_version=IPVersion.V4Only)
    server = args.name.lower().replace(" ", "-") + "-zc.local."
    properties: dict[str, str | None] = {}
    for entry in args.txt:
        key, equals, value = entry.partition("=")
        properties[key] = value if equals else None
    infos = [
        ServiceInfo(
            service_type,
            f"{args.name}.{service_type}",
            addresses=[socket.inet_aton(args.address)],
            port=args.port,
            server=server,
            properties=properties,
        )
        for service_type in args.type
    ]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    for info in infos:
        zc.register_service(info)
    emit(event="registered", name=args.name, server=server)
    stop.wait(args.seconds)
    for info in infos:
        zc.unregister_service(info)
    emit(event="unregistered")
    # zeroconf's close() can linger on its event-loop thread; the goodbyes are already sent.
    threading.Thread(target=zc.close, daemon=True).start()
    time.sleep(0.5)
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("browse")
    b.add_argument("--type", action="append", required=True)
    b.add_argument("--seconds", type=float, default=10)
    r = sub.add_parser("register")
    r.add_argument("--name", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--address", required=True)
    r.add_argument("--type", action="append", required=True)
    r.add_argument("--txt", action="append", default=[])
    r.add_argument("--seconds", type=float, default=3600)
    args = parser.parse_args()
    browse(args) if args.command == "browse" else register(args)


if __name__ == "__main__":
    sys.exit(main())
