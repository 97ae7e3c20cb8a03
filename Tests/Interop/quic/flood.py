#!/usr/bin/env python3
"""Silent-connection flood against a CribCall monitor's QUIC endpoint, built on aioquic.

An attacker/load tool: it opens many mutually-authenticated QUIC connections (ALPN
``cribcall/1``, a throwaway self-signed Ed25519 client certificate the monitor does not
know, so each connection is an *untrusted* peer that may only pair) and then says nothing
at all: no control stream, no frame, only a QUIC PING every few seconds so that neither
side's idle timeout (30 s) fires. It shows whether such connections can starve the monitor
of connection slots: how many were accepted, and which the monitor closed later, when and
with which code.

Every event is printed as one JSON object per line on stdout (``cribcall_peer.emit``);
aioquic's own warnings go to stderr. Events, in order:

    {"event":"ready"}                                   arguments parsed, before any socket
    {"event":"closed","source":…,"connection":i,…}      each close by the server, as it happens
    {"event":"flooded","attempted":N,"established":E,"failed":F,"seconds":S,…}
    {"event":"summary","attempted":N,…,"closed_by_server":C,"close_codes":{…},
     "alive_at_end":A,"per_source":{…},…}                after --duration, or on SIGTERM/SIGINT
    {"event":"error","reason":…}                        unusable environment (exit 2)

Definitions:

- *established*: the client saw HandshakeCompleted **and** the server acknowledged a first
  1-RTT PING. In TLS 1.3 the client finishes its side of the handshake before the server
  has checked the client certificate and Finished; a server processes no 1-RTT packet
  before that, so the acknowledgement proves the monitor accepted the connection. Both must
  happen within --handshake-timeout seconds of the socket's creation.
- *closed by the server*: an established connection aioquic reports as terminated
  (``ConnectionTerminated``) although this tool did not close it: the monitor sent
  CONNECTION_CLOSE (kind ``application`` - the contract's codes - or ``transport``), or it
  stopped answering the PINGs until aioquic's idle timeout fired (kind ``idle-timeout``,
  code null: no CONNECTION_CLOSE arrived). aioquic reports a close only after its 3-PTO
  draining period (milliseconds on loopback).
- ``close_codes`` keys: ``"<code>"`` (decimal) for an application close, ``"transport:0x…"``
  for a transport close, ``"idle-timeout"``. ``failures`` keys: ``handshake-timeout``,
  ``closed:<close key>`` (refused during the handshake), ``socket-error:<errno>``,
  ``cancelled`` (SIGTERM/SIGINT during the flood).
- ``retried``: connections that received a QUIC v1 Retry packet before being established
  (address validation under load). aioquic's client follows a Retry by itself (it resends
  its Initial with the token and checks the server's retry_source_connection_id transport
  parameter); aioquic exposes no public counter for it, so this tool recognises the Retry on
  the wire, from the first byte and version of each datagram received before the
  connection is established - no aioquic internals are used.
- ``responsive_at_end`` (normal end only, null after a signal): alive connections that
  acknowledged one last PING within 2 s - a monitor that silently forgot a connection
  still counts in ``alive_at_end`` until the idle timeout, but not here.

No aioquic private attribute is used: the tool relies on ``QuicConnectionProtocol``
(``connect``, ``close``, ``transmit``), ``QuicConnection.send_ping`` and the
``HandshakeCompleted`` / ``PingAcknowledged`` / ``ConnectionTerminated`` events. The
certificate and configuration come from ``cribcall_peer.py`` beside this file
(``generate_identity``, ``base_configuration``, ``apply_identity``); the monitor's
certificate is not pinned (``verify_mode=CERT_NONE``, no CA validation).

Usage:
    flood.py --host 127.0.0.1 --port PORT --sources 127.0.0.2,127.0.0.3 --connections 300
             [--duration 20] [--handshake-timeout 5] [--concurrency 50]
             [--ping-interval 5] [--identities 1]

Each connection has its own UDP socket bound to one of --sources (round-robin, port 0); on
Linux all of 127.0.0.0/8 is loopback, so 127.0.0.2… need no setup. Exit 0 when done
(including SIGTERM/SIGINT, which print the summary at once), 2 for an unusable environment
(bad arguments, aioquic or cribcall_peer not importable, --host not resolvable, a source
address this host cannot bind), 1 for an unexpected error.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import ipaddress
import itertools
import json
import math
import signal
import socket
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2


def _fatal_without_peer(reason: str) -> NoReturn:
    """The error line for when cribcall_peer (hence its emit) cannot be imported."""
    sys.stdout.write(json.dumps({"event": "error", "reason": reason}, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    sys.exit(EXIT_USAGE)


# The shared helpers live in cribcall_peer.py beside this file; it imports aioquic,
# cryptography and rfc8785, so a missing package shows up here.
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import cribcall_peer as peer
    from aioquic.asyncio.protocol import QuicConnectionProtocol
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.connection import NetworkAddress, QuicConnection
    from aioquic.quic.events import ConnectionTerminated, HandshakeCompleted, PingAcknowledged, QuicEvent
    from aioquic.quic.packet import QuicErrorCode, QuicFrameType
except ImportError as exc:  # pragma: no cover - depends on the environment
    if __name__ == "__main__":
        _fatal_without_peer(f"cannot import aioquic / cribcall_peer ({exc}); install the packages of README.md")
    raise

emit = peer.emit

# --------------------------------------------------------------------------------------
# Tunables

PING_INTERVAL_S = 5.0  # keep-alive period (default of --ping-interval); the idle timeout is 30 s
PROBE_TIMEOUT_S = 2.0  # how long the final PING may take to be acknowledged
RESOLVE_TIMEOUT_S = 5.0  # getaddrinfo of --host
CANCEL_TIMEOUT_S = 2.0  # how long in-flight handshakes may take to unwind after a signal
CLOSE_GRACE_S = 0.1  # after the final CONNECTION_CLOSEs, before the sockets are gone
QUIC_V1 = b"\x00\x00\x00\x01"


def is_retry_packet(data: bytes) -> bool:
    """True for a QUIC v1 Retry packet (RFC 9000 section 17.2.5): long header (0x80), packet
    type 0b11 (0x30); the fixed bit 0x40 is ignored in case the server greases it (RFC 9287)."""
    return len(data) >= 5 and data[0] & 0xB0 == 0xB0 and data[1:5] == QUIC_V1


def close_kind(event: ConnectionTerminated) -> str:
    """application (CONNECTION_CLOSE 0x1d), transport (0x1c), or idle-timeout (aioquic's own
    timer: nothing received for the idle timeout; no frame arrived)."""
    if event.frame_type is None:
        return "application"
    if (event.error_code == QuicErrorCode.INTERNAL_ERROR and event.frame_type == QuicFrameType.PADDING
            and event.reason_phrase == "Idle timeout"):
        return "idle-timeout"
    return "transport"


def close_key(event: ConnectionTerminated) -> str:
    """The key of close_codes: "2" (application), "transport:0x178", "idle-timeout"."""
    kind = close_kind(event)
    if kind == "application":
        return str(event.error_code)
    if kind == "transport":
        return f"transport:{event.error_code:#x}"
    return kind


# --------------------------------------------------------------------------------------
# One silent connection


class SilentConnection(QuicConnectionProtocol):
    """One QUIC connection that never opens a stream: it answers what aioquic must answer
    (ACKs) and sends a PING every ping interval once established.

    `outcome` resolves to True when established (handshake done and a first PING
    acknowledged), or to False if the connection ended first."""

    def __init__(self, quic: QuicConnection, *, flood: Flood, index: int, source: str) -> None:
        super().__init__(quic)
        self.flood = flood
        self.index = index
        self.source = source
        self.started_at = self._loop.time()
        self.established_at: float | None = None
        self.saw_retry = False
        self.closed_by_us = False
        self.ended: ConnectionTerminated | None = None
        self.outcome: asyncio.Future[bool] = self._loop.create_future()
        self.probe_answered = False
        self._first_ping: int | None = None
        self._probe_ping: int | None = None
        self._keepalive: asyncio.TimerHandle | None = None

    @property
    def alive(self) -> bool:
        return self.established_at is not None and self.ended is None and not self.closed_by_us

    # -- aioquic plumbing

    def datagram_received(self, data: bytes | str, addr: NetworkAddress) -> None:
        if self.established_at is None and not self.saw_retry and isinstance(data, bytes) and is_retry_packet(data):
            self.saw_retry = True  # aioquic itself validates the Retry and restarts with the token
        super().datagram_received(data, addr)

    def transmit(self) -> None:
        # aioquic's timers may still fire after this tool closed the socket (e.g. the end
        # of the closing period); there is nothing left to send then.
        if self._transport is None or self._transport.is_closing():
            return
        super().transmit()

    def quic_event_received(self, event: QuicEvent) -> None:
        # Called while aioquic processes a datagram or a timer; it transmits right after,
        # so a PING queued here leaves at once.
        if isinstance(event, HandshakeCompleted):
            self._first_ping = self._send_ping()
        elif isinstance(event, PingAcknowledged):
            self._ping_acknowledged(event.uid)
        elif isinstance(event, ConnectionTerminated):
            self._terminated(event)

    # -- lifecycle

    def _send_ping(self) -> int:
        uid = next(self.flood.ping_ids)
        self._quic.send_ping(uid)
        return uid

    def _ping_acknowledged(self, uid: int) -> None:
        if uid == self._first_ping and self.established_at is None and self.ended is None and not self.closed_by_us:
            self.established_at = self._loop.time()
            self.flood.on_established(self)  # counted here, synchronously, before any later close
            self._schedule_keepalive()
            if not self.outcome.done():
                self.outcome.set_result(True)
        elif uid == self._probe_ping and not self.probe_answered:
            self.probe_answered = True
            self.flood.on_probe_answered()

    def _schedule_keepalive(self) -> None:
        self._keepalive = self._loop.call_later(self.flood.ping_interval, self._keepalive_tick)

    def _keepalive_tick(self) -> None:
        self._keepalive = None
        if not self.alive:
            return
        self._send_ping()
        self.transmit()
        self._schedule_keepalive()

    def probe(self) -> None:
        """Sends the final PING; on_probe_answered is called when it is acknowledged."""
        if self.alive:
            self._probe_ping = self._send_ping()
            self.transmit()

    def _terminated(self, event: ConnectionTerminated) -> None:
        if self.ended is not None:
            return
        self.ended = event
        self._cancel_keepalive()
        if not self.outcome.done():
            self.outcome.set_result(False)  # refused or dropped during the handshake
        elif self.established_at is not None and not self.closed_by_us:
            self.flood.on_server_close(self, event)
        if self._transport is not None:
            self._transport.close()  # nothing more will come: free the socket

    def shut(self, reason: str) -> None:
        """Closes from this side: CONNECTION_CLOSE (NO_ERROR) now, then the socket. Not
        counted as a server close, whatever aioquic reports later."""
        self.closed_by_us = True
        self._cancel_keepalive()
        if self.ended is None:
            self.close(error_code=QuicErrorCode.NO_ERROR, reason_phrase=reason)  # transmits at once
        if self._transport is not None:
            self._transport.close()  # UDP: datagrams already handed to the kernel still leave

    def _cancel_keepalive(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None


# --------------------------------------------------------------------------------------
# The flood


@dataclass
class SourceStats:
    attempted: int = 0
    established: int = 0
    failed: int = 0
    closed_by_server: int = 0

    def as_json(self, alive: int) -> dict[str, int]:
        return {"attempted": self.attempted, "established": self.established, "failed": self.failed,
                "closed_by_server": self.closed_by_server, "alive_at_end": alive}


class Flood:
    """Opens the connections (bounded concurrency), keeps them alive, counts what happens."""

    def __init__(self, args: argparse.Namespace, configurations: list[QuicConfiguration],
                 address: NetworkAddress, family: socket.AddressFamily, sources: list[str]) -> None:
        self.loop = asyncio.get_running_loop()
        self.connections_wanted: int = args.connections
        self.concurrency: int = args.concurrency
        self.handshake_timeout: float = args.handshake_timeout
        self.ping_interval: float = args.ping_interval
        self.configurations = configurations
        self.address = address
        self.family = family
        self.sources = sources
        self.ping_ids = itertools.count(1)
        self.connections: list[SilentConnection] = []
        self.per_source = {source: SourceStats() for source in sources}
        self.attempted = 0
        self.established = 0
        self.failed = 0
        self.retried = 0
        self.closed_by_server = 0
        self.failures: Counter[str] = Counter()
        self.close_codes: Counter[str] = Counter()
        self.handshake_seconds: list[float] = []
        self.started_at = self.loop.time()
        self.flooded_at: float | None = None
        self._probe_pending = 0
        self._probe_done = asyncio.Event()

    # -- opening

    async def open_all(self) -> None:
        """At most `concurrency` attempts in flight; each one is bounded by the handshake timeout."""
        self.started_at = self.loop.time()
        indices = iter(range(self.connections_wanted))  # shared by the workers (one thread: safe)

        async def worker() -> None:
            for index in indices:
                await self.attempt(index)

        await asyncio.gather(*(worker() for _ in range(min(self.concurrency, self.connections_wanted))))
        self.flooded_at = self.loop.time()

    async def attempt(self, index: int) -> None:
        source = self.sources[index % len(self.sources)]
        configuration = self.configurations[index % len(self.configurations)]
        self.attempted += 1
        self.per_source[source].attempted += 1
        # The protocol exists before its socket, so that a failure at any point can be cleaned up.
        connection = SilentConnection(QuicConnection(configuration=configuration), flood=self, index=index, source=source)
        self.connections.append(connection)
        failure: str | None = None
        try:
            async with asyncio.timeout(self.handshake_timeout):
                await self.loop.create_datagram_endpoint(lambda: connection, local_addr=(source, 0), family=self.family)
                connection.connect(self.address)  # sends the first Initial
                if not await connection.outcome:
                    assert connection.ended is not None
                    failure = f"closed:{close_key(connection.ended)}"
        except TimeoutError:
            failure = "handshake-timeout"
        except OSError as exc:
            failure = f"socket-error:{errno.errorcode.get(exc.errno or 0, exc.errno)}"
        except asyncio.CancelledError:
            self._failed(connection, "cancelled")
            raise
        finally:
            if connection.saw_retry:
                self.retried += 1
        if failure is not None:
            self._failed(connection, failure)

    def _failed(self, connection: SilentConnection, reason: str) -> None:
        connection.shut("giving up")
        self.failed += 1
        self.per_source[connection.source].failed += 1
        self.failures[reason] += 1

    # -- callbacks from the connections

    def on_established(self, connection: SilentConnection) -> None:
        assert connection.established_at is not None
        self.established += 1
        self.per_source[connection.source].established += 1
        self.handshake_seconds.append(connection.established_at - connection.started_at)

    def on_server_close(self, connection: SilentConnection, event: ConnectionTerminated) -> None:
        now = self.loop.time()
        kind = close_kind(event)
        self.closed_by_server += 1
        self.per_source[connection.source].closed_by_server += 1
        self.close_codes[close_key(event)] += 1
        assert connection.established_at is not None
        emit({
            "event": "closed",
            "source": connection.source,
            "connection": connection.index,
            "after_s": round(now - connection.established_at, 3),  # since this connection was established
            "at_s": round(now - self.started_at, 3),  # since the flood began
            "kind": kind,
            "code": None if kind == "idle-timeout" else event.error_code,
            "reason": event.reason_phrase,
        })

    def on_probe_answered(self) -> None:
        self._probe_pending -= 1
        if self._probe_pending <= 0:
            self._probe_done.set()

    # -- keeping alive and ending

    async def probe(self) -> int:
        """One last PING on every alive connection; returns how many were acknowledged in time."""
        alive = [c for c in self.connections if c.alive]
        if not alive:
            return 0
        self._probe_pending = len(alive)
        self._probe_done.clear()
        for connection in alive:
            connection.probe()
        try:
            await asyncio.wait_for(self._probe_done.wait(), PROBE_TIMEOUT_S)
        except TimeoutError:
            pass
        return sum(1 for c in alive if c.probe_answered)

    def alive_count(self) -> int:
        return sum(1 for c in self.connections if c.alive)

    def close_all(self) -> None:
        """CONNECTION_CLOSE (NO_ERROR) on every connection still open, then all sockets closed."""
        for connection in self.connections:
            if not connection.closed_by_us:
                connection.shut("flood finished")

    # -- reports

    def flooded_event(self) -> dict[str, Any]:
        assert self.flooded_at is not None
        return {
            "event": "flooded",
            "attempted": self.attempted,
            "established": self.established,
            "failed": self.failed,
            "seconds": round(self.flooded_at - self.started_at, 3),
            "retried": self.retried,
            "failures": dict(self.failures),
            "closed_by_server": self.closed_by_server,  # already, during the flood
            "handshake_ms": self._handshake_stats(),
        }

    def _handshake_stats(self) -> dict[str, float] | None:
        """Socket creation to first PING acknowledged, established connections (nearest rank)."""
        if not self.handshake_seconds:
            return None
        ordered = sorted(self.handshake_seconds)

        def rank(p: int) -> float:
            return round(1000 * ordered[max(0, math.ceil(len(ordered) * p / 100) - 1)], 1)

        return {"p50": rank(50), "p95": rank(95), "max": rank(100)}

    def summary_event(self, alive: int, responsive: int | None, interrupted: str | None) -> dict[str, Any]:
        alive_by_source = Counter(c.source for c in self.connections if c.alive)
        return {
            "event": "summary",
            "attempted": self.attempted,
            "established": self.established,
            "failed": self.failed,
            "closed_by_server": self.closed_by_server,
            "close_codes": dict(self.close_codes),
            "alive_at_end": alive,
            "responsive_at_end": responsive,
            "retried": self.retried,
            "failures": dict(self.failures),
            "per_source": {source: stats.as_json(alive_by_source[source]) for source, stats in self.per_source.items()},
            "seconds": round(self.loop.time() - self.started_at, 3),  # since the flood began
            "interrupted": interrupted,  # "SIGTERM" / "SIGINT", or null
        }


# --------------------------------------------------------------------------------------
# Setup


def client_configurations(count: int) -> list[QuicConfiguration]:
    """`count` throwaway identities (a fresh Ed25519 certificate is ~0.1 ms), one configuration
    each: the contract's ALPN, idle timeout and initial RTT, QUIC v1, no server pin."""
    configurations = []
    for _ in range(count):
        configuration = peer.base_configuration(is_client=True, alpn=peer.ALPN)
        peer.apply_identity(configuration, peer.generate_identity(str(uuid.uuid4())))
        configurations.append(configuration)
    return configurations


def raise_file_limit(sockets: int) -> None:
    """One UDP socket per connection: lift the soft RLIMIT_NOFILE towards the hard one if needed."""
    try:
        import resource
    except ImportError:  # not on this platform
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = sockets + 64
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass  # failures then show up as socket-error:EMFILE


def unusable_source(sources: list[str], family: socket.AddressFamily) -> str | None:
    """Binds one throwaway socket per source, so that an address this host does not have is an
    error at start-up (exit 2) rather than N socket-error failures."""
    for source in sources:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.bind((source, 0))
        except OSError as exc:
            return f"cannot bind a UDP socket to source {source}: {exc.strerror or exc}"
    return None


async def resolve_target(host: str, port: int, family: socket.AddressFamily | None) -> tuple[NetworkAddress, socket.AddressFamily]:
    loop = asyncio.get_running_loop()
    infos = await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_DGRAM), RESOLVE_TIMEOUT_S)
    for info_family, _, _, _, address in infos:
        if family is None or info_family == family:
            return address, info_family
    raise OSError(f"{host} has no address of the sources' family")


async def run(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    received: list[str] = []

    def on_signal(signum: signal.Signals) -> None:
        if not received:
            received.append(signum.name)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)
    emit({"event": "ready"})  # imports done, arguments parsed, signals handled; nothing sent yet

    try:
        address, family = await resolve_target(args.host, args.port, args.family)
    except (OSError, TimeoutError) as exc:
        emit({"event": "error", "reason": f"cannot resolve --host {args.host}: {str(exc) or 'timeout'}"})
        return EXIT_USAGE
    sources = args.sources or [("::" if family == socket.AF_INET6 else "0.0.0.0")]
    unusable = unusable_source(sources, family)
    if unusable:
        emit({"event": "error", "reason": unusable})
        return EXIT_USAGE
    raise_file_limit(args.connections)
    flood = Flood(args, client_configurations(args.identities or args.connections), address, family, sources)

    # Phase 1: open the connections, unless a signal comes first.
    opening = asyncio.ensure_future(flood.open_all())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        # Each attempt is bounded by --handshake-timeout; this ceiling only guards against the unforeseen.
        rounds = math.ceil(args.connections / args.concurrency) + 1
        await asyncio.wait({opening, stopping}, timeout=rounds * args.handshake_timeout + 10,
                           return_when=asyncio.FIRST_COMPLETED)
        if opening.done():
            opening.result()  # re-raises an unexpected error
        else:
            opening.cancel()  # a signal (or the ceiling): in-flight attempts count as "cancelled"
            await asyncio.wait({opening}, timeout=CANCEL_TIMEOUT_S)
            flood.flooded_at = flood.flooded_at or loop.time()
        if not stop.is_set():
            emit(flood.flooded_event())

        # Phase 2: hold the established ones (their PING timers run by themselves).
        if not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), args.duration)
            except TimeoutError:
                pass
    finally:
        stopping.cancel()

    # Phase 3: final PING (not after a signal: exit promptly), count, close everything.
    responsive = None if received else await flood.probe()
    alive = flood.alive_count()
    summary = flood.summary_event(alive, responsive, received[0] if received else None)
    flood.close_all()
    await asyncio.sleep(CLOSE_GRACE_S)  # let the sockets' connection_lost callbacks run
    emit(summary)
    return EXIT_OK


# --------------------------------------------------------------------------------------
# Command line


class JsonArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as {"event":"error","reason":…} (and usage on stderr), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        emit({"event": "error", "reason": f"bad arguments: {message}"})
        sys.exit(EXIT_USAGE)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text}")
    return value


def non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number: {text}")
    return value


def port_number(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: {text}")
    return value


def source_list(text: str) -> list[str]:
    """Comma-separated IP literals, all of one family."""
    sources = [part.strip() for part in text.split(",") if part.strip()]
    if not sources:
        raise argparse.ArgumentTypeError("no source address")
    try:
        parsed = [ipaddress.ip_address(s) for s in sources]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if len({a.version for a in parsed}) > 1:
        raise argparse.ArgumentTypeError("mixes IPv4 and IPv6 addresses")
    return [str(a) for a in parsed]


def build_parser() -> argparse.ArgumentParser:
    parser = JsonArgumentParser(
        description="Open many silent, untrusted, kept-alive QUIC connections (ALPN cribcall/1) to a "
                    "CribCall monitor and report which it accepted and closed.",
    )
    parser.add_argument("--host", required=True, help="the monitor's address")
    parser.add_argument("--port", type=port_number, required=True, help="the monitor's UDP port")
    parser.add_argument("--sources", type=source_list, default=None,
                        help="comma-separated local addresses, used round-robin (default: any address)")
    parser.add_argument("--connections", type=positive_int, default=300, help="connections to attempt (default 300)")
    parser.add_argument("--duration", type=non_negative_float, default=20.0,
                        help="seconds to keep them alive after the flood (default 20)")
    parser.add_argument("--handshake-timeout", type=positive_float, default=5.0,
                        help="seconds per connection, socket to first PING acknowledged (default 5)")
    parser.add_argument("--concurrency", type=positive_int, default=50, help="handshakes in flight at most (default 50)")
    parser.add_argument("--ping-interval", type=positive_float, default=PING_INTERVAL_S,
                        help=f"seconds between keep-alive PINGs (default {PING_INTERVAL_S:g}; below the "
                             f"{peer.IDLE_TIMEOUT_S:g} s idle timeout)")
    parser.add_argument("--identities", type=non_negative_int, default=1,
                        help="distinct client certificates, used round-robin (default 1; 0 = one per connection)")
    return parser


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.ping_interval >= peer.IDLE_TIMEOUT_S:
        parser.error(f"--ping-interval must be below the idle timeout ({peer.IDLE_TIMEOUT_S:g} s)")
    args.family = None
    if args.sources:
        args.family = socket.AF_INET6 if ipaddress.ip_address(args.sources[0]).version == 6 else socket.AF_INET
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    started = time.monotonic()
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:  # SIGINT before the loop's handler was installed
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - one JSON line instead of a traceback
        emit({"event": "error", "reason": f"unexpected {type(exc).__name__}: {exc}",
              "seconds": round(time.monotonic() - started, 3)})
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
