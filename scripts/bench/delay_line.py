#!/usr/bin/env python3
"""A userspace "netem": joins two network namespaces through a TUN device in each and forwards every IP packet
between them after a fixed one-way delay.

The benchmark machines run a kernel without sch_netem (`tc qdisc add … netem` → "Specified qdisc kind is unknown"),
so the stream benchmark's "LAN with 20 ms of delay" is built here instead: namespace A gets `cctun` with ADDR_A/24,
namespace B `cctun` with ADDR_B/24, and this process, holding both TUN file descriptors, copies packets across,
each one `--delay-ms` after it left (per direction, order kept).

    delay_line.py --ns-a NS_A --ns-b NS_B [--addr-a 10.79.0.1] [--addr-b 10.79.0.2] [--delay-ms 20]

The namespaces must exist (`ip netns add`). Prints {"event":"ready",...} once both ends are up, then runs until
SIGTERM/SIGINT and prints {"event":"stopped","forwarded":N}. Needs root (CAP_NET_ADMIN) and /dev/net/tun.
"""
import argparse
import collections
import ctypes
import fcntl
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
DEVICE = "cctun"

libc = ctypes.CDLL(None, use_errno=True)


def setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns({path}): {os.strerror(error)}")
    finally:
        os.close(fd)


def open_tun_in(namespace):
    """Creates the TUN device inside `namespace` (a device belongs to the namespace it is created in)."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        setns(f"/var/run/netns/{namespace}")
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", DEVICE.encode(), IFF_TUN | IFF_NO_PI))
        return fd
    finally:
        if libc.setns(home, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "could not return to the original network namespace")
        os.close(home)


def configure(namespace, address):
    for command in (["ip", "addr", "add", f"{address}/24", "dev", DEVICE],
                    ["ip", "link", "set", DEVICE, "up"],
                    ["ip", "link", "set", "lo", "up"]):
        subprocess.run(["ip", "netns", "exec", namespace] + command, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ns-a", required=True)
    parser.add_argument("--ns-b", required=True)
    parser.add_argument("--addr-a", default="10.79.0.1")
    parser.add_argument("--addr-b", default="10.79.0.2")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="one-way delay, each direction")
    args = parser.parse_args()

    fd_a = open_tun_in(args.ns_a)
    fd_b = open_tun_in(args.ns_b)
    configure(args.ns_a, args.addr_a)
    configure(args.ns_b, args.addr_b)

    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent may have spawned us with these blocked (Foundation's Process passes its thread's mask on).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

    delay = args.delay_ms / 1000
    # One FIFO per direction: a constant delay keeps the order, so the head is always the next one due.
    pending = {fd_a: collections.deque(), fd_b: collections.deque()}
    other = {fd_a: fd_b, fd_b: fd_a}
    selector = selectors.DefaultSelector()
    selector.register(fd_a, selectors.EVENT_READ)
    selector.register(fd_b, selectors.EVENT_READ)
    forwarded = 0
    print(json.dumps({"event": "ready", "delayMs": args.delay_ms, "a": args.addr_a, "b": args.addr_b}), flush=True)
    while not stopping:
        now = time.monotonic()
        heads = [queue[0][0] for queue in pending.values() if queue]
        timeout = max(0.0, min(heads) - now) if heads else 0.5
        for key, _ in selector.select(timeout):
            while True:
                try:
                    packet = os.read(key.fd, 65536)
                except BlockingIOError:
                    break
                pending[other[key.fd]].append((time.monotonic() + delay, packet))
        now = time.monotonic()
        for fd, queue in pending.items():
            while queue and queue[0][0] <= now:
                _, packet = queue.popleft()
                try:
                    os.write(fd, packet)
                    forwarded += 1
                except OSError:
                    pass  # the device went down: drop, as a link would
    print(json.dumps({"event": "stopped", "forwarded": forwarded}), flush=True)


if __name__ == "__main__":
    try:
        main()
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"delay_line.py: {error}: run as root on a kernel with TUN support (/dev/net/tun)", file=sys.stderr)
        sys.exit(2)
