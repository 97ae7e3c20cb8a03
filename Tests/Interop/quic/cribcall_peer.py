#!/usr/bin/env python3
"""Independent interop peer for the CribCall QUIC control channel, built on aioquic.

Subcommands: gen-cert, client, server, bench (see README.md beside this file).
Every event is printed as one JSON object per line on stdout.

aioquic has no public hook for certificate pinning or for requiring a client
certificate, so this file wraps three private methods of one ``aioquic.tls.Context``
*instance* per connection (never the class): see ``install_server_pin`` and
``require_client_certificate``. The aioquic version is pinned in README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import hashlib
import itertools
import json
import logging
import math
import os
import signal
import socket
import ssl
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Union

import rfc8785
from aioquic import tls
from aioquic.asyncio.server import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.buffer import Buffer  # type: ignore[attr-defined]
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import END_STATES, NetworkAddress, QuicConnection, QuicConnectionState
from aioquic.quic.events import ConnectionTerminated, HandshakeCompleted, QuicEvent, StreamDataReceived
from aioquic.quic.packet import QuicErrorCode, QuicFrameType, QuicProtocolVersion
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import NameOID

# --------------------------------------------------------------------------------------
# Wire contract

ALPN = "cribcall/1"
CONTROL_STREAM_ID = 0
HEADER_SIZE = 4
MAX_FRAME_SIZE = 262_144
IDLE_TIMEOUT_S = 30.0
INITIAL_RTT_S = 0.010
ERROR_FLUSH_TIMEOUT_S = 1.0
CERT_VALIDITY = datetime.timedelta(days=20 * 365.25)

PROTOCOL_ERROR = 1
UNAUTHORIZED = 2
UNSUPPORTED_MESSAGE = 3
CONFLICT = 4
INTERNAL_ERROR = 5
ERROR_NAMES = {
    PROTOCOL_ERROR: "PROTOCOL_ERROR",
    UNAUTHORIZED: "UNAUTHORIZED",
    UNSUPPORTED_MESSAGE: "UNSUPPORTED_MESSAGE",
    CONFLICT: "CONFLICT",
    INTERNAL_ERROR: "INTERNAL_ERROR",
}

PAIRING_TYPES = frozenset({"PAIR_REQUEST", "PIN_PAIRING_INIT", "PIN_SUBMIT"})
LISTENER_TYPES = PAIRING_TYPES | frozenset(
    {
        "EVENTS_SINCE", "START_STREAM_REQUEST", "END_STREAM", "PIN_STREAM", "WEBRTC_ANSWER",
        "WEBRTC_ICE", "PING", "PONG", "UNPAIR", "ERROR",
    }
)
MONITOR_TYPES = frozenset(
    {
        "PAIR_ACCEPTED", "PAIR_REJECTED", "PIN_REQUIRED", "NOISE_EVENT", "START_STREAM_RESPONSE",
        "END_STREAM", "STREAM_ENDING_SOON", "WEBRTC_OFFER", "WEBRTC_ICE", "PING", "PONG",
        "UNPAIRED", "ERROR",
    }
)
KNOWN_TYPES = LISTENER_TYPES | MONITOR_TYPES

# Exit codes of the client.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_PIN_MISMATCH = 3
EXIT_TIMEOUT = 4

Message = dict[str, Any]


def emit(event: Message) -> None:
    """Prints one event as a compact JSON line and flushes it at once."""
    sys.stdout.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


class FrameError(Exception):
    """A framing or message-shape violation: answered with ERROR 1 PROTOCOL_ERROR and a close."""


def encode_frame(payload: bytes) -> bytes:
    """Prefixes a payload with its 4-byte big-endian length."""
    if not 1 <= len(payload) <= MAX_FRAME_SIZE:
        raise ValueError(f"payload of {len(payload)} bytes is outside 1...{MAX_FRAME_SIZE}")
    return len(payload).to_bytes(HEADER_SIZE, "big") + payload


def encode_message(message: Message) -> bytes:
    """Frames a message in RFC 8785 canonical form."""
    return encode_frame(rfc8785.dumps(message))


class FrameDecoder:
    """Incremental decoder: holds at most one pending frame (4 + 262,144 bytes)."""

    def __init__(self) -> None:
        self._header = bytearray()
        self._body = bytearray()
        self._length: int | None = None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Yields each complete payload in order; raises FrameError at the first bad length."""
        view = memoryview(data)
        while view:
            if self._length is None:
                view = self._take(self._header, view, HEADER_SIZE)
                if len(self._header) < HEADER_SIZE:
                    return
                self._length = self._check_length(int.from_bytes(self._header, "big"))
                self._header.clear()
            view = self._take(self._body, view, self._length)
            if len(self._body) == self._length:
                payload = bytes(self._body)
                self._body.clear()
                self._length = None
                yield payload

    @staticmethod
    def _take(target: bytearray, view: memoryview, wanted: int) -> memoryview:
        count = wanted - len(target)
        target += view[:count]
        return view[count:]

    @staticmethod
    def _check_length(length: int) -> int:
        if not 1 <= length <= MAX_FRAME_SIZE:
            raise FrameError(f"frame length {length} is outside 1...{MAX_FRAME_SIZE}")
        return length


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> Message:
    result: Message = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_message(payload: bytes) -> Message:
    """Decodes one frame payload: strict UTF-8, strict JSON, an object with a string "type"."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(f"frame is not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        value = json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"frame is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise FrameError("message is not a JSON object")
    if not isinstance(value.get("type"), str):
        raise FrameError('message has no string "type"')
    return value


def error_message(code: int, text: str, in_reply_to: str | None = None) -> Message:
    """Builds an ERROR message of the contract."""
    message: Message = {"type": "ERROR", "code": code, "error": ERROR_NAMES[code], "message": text}
    if in_reply_to is not None:
        message["inReplyTo"] = in_reply_to
    return message


@dataclass(frozen=True)
class Reply:
    """What the monitor answers to one message: a message (or none), and a close code (or none)."""

    message: Message | None
    close_code: int | None = None


def monitor_reply(message: Message, trusted: bool) -> Reply:
    """The minimal monitor's policy (PROTOCOL.md section 4, without the pairing handlers)."""
    kind: str = message["type"]
    if not trusted:
        return _untrusted_reply(kind)
    if kind == "PING":
        return _pong(message)
    if kind in ("PONG", "ERROR"):
        return Reply(None)
    if kind in LISTENER_TYPES:
        return Reply(error_message(UNSUPPORTED_MESSAGE, f"{kind} is not implemented by the interop peer", kind))
    return Reply(error_message(UNSUPPORTED_MESSAGE, f'message type "{kind}" is not accepted by a monitor', kind))


def _untrusted_reply(kind: str) -> Reply:
    if kind in PAIRING_TYPES:
        return Reply(error_message(UNSUPPORTED_MESSAGE, f"{kind}: pairing is not implemented by the interop peer", kind))
    if kind in KNOWN_TYPES:
        text = f"{kind} needs a paired device; pair first (QR code or PIN)"
        return Reply(error_message(UNAUTHORIZED, text, kind), UNAUTHORIZED)
    return Reply(error_message(UNSUPPORTED_MESSAGE, f'unknown message type "{kind}"', kind), UNSUPPORTED_MESSAGE)


def _pong(ping: Message) -> Reply:
    timestamp = ping.get("timestamp")
    if not isinstance(timestamp, int) or isinstance(timestamp, bool):
        return Reply(error_message(PROTOCOL_ERROR, "PING.timestamp must be an integer", "PING"), PROTOCOL_ERROR)
    return Reply({"type": "PONG", "timestamp": timestamp})


# --------------------------------------------------------------------------------------
# Identity


@dataclass(frozen=True)
class Identity:
    """A self-signed Ed25519 certificate and its private key."""

    certificate: x509.Certificate
    private_key: ed25519.Ed25519PrivateKey

    @property
    def fingerprint(self) -> str:
        return certificate_fingerprint(self.certificate)

    @property
    def device_id(self) -> str:
        names = self.certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return str(names[0].value) if names else ""


def certificate_fingerprint(certificate: x509.Certificate) -> str:
    """Lowercase hex SHA-256 of the certificate DER."""
    return hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest()


def generate_identity(device_id: str) -> Identity:
    """Creates the certificate of PROTOCOL.md section 1 (CN = id, SAN URI cribcall:<id>, 20 years)."""
    key = ed25519.Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, device_id)])
    now = datetime.datetime.now(datetime.timezone.utc)
    serial = int.from_bytes(os.urandom(16), "big") >> 1 or 1  # 16 random bytes, positive
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - datetime.timedelta(seconds=60))
        .not_valid_after(now + CERT_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_digital_signature_usage(), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(f"cribcall:{device_id}")]), critical=False)
        .sign(key, algorithm=None)
    )
    return Identity(certificate, key)


def _digital_signature_usage() -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
        key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False,
    )


def write_identity(identity: Identity, directory: Path) -> tuple[Path, Path]:
    """Writes cert.pem and key.pem (PKCS#8, mode 0600) into a directory."""
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(identity.certificate.public_bytes(serialization.Encoding.PEM))
    key_pem = identity.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key_pem)
    return cert_path, key_path


def load_identity(cert_path: Path, key_path: Path) -> Identity:
    """Reads a PEM certificate and its PEM Ed25519 private key."""
    certificate = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise ValueError(f"{key_path} does not hold an Ed25519 private key")
    return Identity(certificate, key)


def normalize_fingerprint(text: str) -> str:
    """Validates a 64-hex-digit fingerprint (colons allowed) and lowercases it."""
    value = text.replace(":", "").strip().lower()
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise argparse.ArgumentTypeError(f"not a SHA-256 fingerprint: {text!r}")
    return value


# --------------------------------------------------------------------------------------
# TLS hooks (per Context instance; aioquic exposes no public API for these)


class PinMismatchAlert(tls.AlertBadCertificate):
    """Aborts the handshake with bad_certificate (QUIC CRYPTO_ERROR 0x12a)."""


class CertificateRequiredAlert(tls.Alert):
    """Aborts the handshake with certificate_required (QUIC CRYPTO_ERROR 0x174)."""

    description = tls.AlertDescription.certificate_required


@dataclass
class PinCheck:
    """The client's pin and what the handshake showed."""

    expected: str
    actual: str | None = None
    checked: bool = False

    @property
    def mismatch(self) -> bool:
        return self.actual is not None and self.actual != self.expected


def install_server_pin(context: tls.Context, pin: PinCheck) -> None:
    """Client side: after aioquic verified the server's CertificateVerify signature (so the peer
    holds the certificate's key), compare the certificate fingerprint with the pin and raise a TLS
    alert on mismatch. This runs before the server Finished is processed, so the client never has
    1-RTT keys and can send no stream data to a wrong server."""
    original = context._client_handle_certificate_verify

    def handle_certificate_verify(input_buf: Buffer) -> None:
        original(input_buf)
        if context._peer_certificate is None:
            raise tls.AlertBadCertificate("the server sent no certificate")
        pin.actual = certificate_fingerprint(context._peer_certificate)
        if pin.mismatch:
            raise PinMismatchAlert("server certificate does not match the pinned fingerprint")
        pin.checked = True

    context._client_handle_certificate_verify = handle_certificate_verify  # type: ignore[method-assign]


def require_client_certificate(context: tls.Context) -> None:
    """Server side: send a CertificateRequest (aioquic's private test switch) and abort with
    certificate_required when the client answers with an empty Certificate, or with
    unsupported_certificate when its key is not Ed25519. aioquic itself verifies the client's
    CertificateVerify signature; no CA validation is done (self-signed by contract)."""
    context._request_client_certificate = True
    original = context._server_handle_certificate

    def handle_certificate(input_buf: Buffer) -> None:
        original(input_buf)
        peer = context._peer_certificate
        if peer is None:
            raise CertificateRequiredAlert("a client certificate is required")
        if not isinstance(peer.public_key(), ed25519.Ed25519PublicKey):
            raise tls.AlertUnsupportedCertificate("the client certificate key must be Ed25519")

    context._server_handle_certificate = handle_certificate  # type: ignore[method-assign]


def peer_fingerprint(quic: QuicConnection) -> str | None:
    """The fingerprint of the certificate the peer proved in the handshake."""
    certificate = quic.tls._peer_certificate
    return certificate_fingerprint(certificate) if certificate is not None else None


# --------------------------------------------------------------------------------------
# QUIC plumbing shared by client and server


def base_configuration(is_client: bool, alpn: str | None) -> QuicConfiguration:
    return QuicConfiguration(
        is_client=is_client,
        alpn_protocols=[alpn] if alpn else None,
        idle_timeout=IDLE_TIMEOUT_S,
        initial_rtt=INITIAL_RTT_S,
        supported_versions=[QuicProtocolVersion.VERSION_1],
        verify_mode=ssl.CERT_NONE,
    )


def apply_identity(configuration: QuicConfiguration, identity: Identity) -> None:
    configuration.certificate = identity.certificate
    configuration.private_key = identity.private_key


@dataclass(frozen=True)
class CloseInfo:
    """How a connection ended."""

    error_code: int
    offending_frame_type: int | None
    reason: str
    by_peer: bool

    @property
    def is_application(self) -> bool:
        return self.offending_frame_type is None

    @property
    def frame_type(self) -> int:
        """The CONNECTION_CLOSE frame type: 0x1d application, 0x1c transport."""
        return QuicFrameType.APPLICATION_CLOSE if self.is_application else QuicFrameType.TRANSPORT_CLOSE

    def event(self) -> Message:
        return {
            "event": "closed",
            "errorCode": self.error_code,
            "frameType": int(self.frame_type),
            "closeKind": "application" if self.is_application else "transport",
            "offendingFrameType": self.offending_frame_type,
            "reason": self.reason,
            "byPeer": self.by_peer,
        }


class ControlProtocol(QuicConnectionProtocol):
    """One QUIC connection carrying the control stream (stream 0)."""

    def __init__(
        self,
        quic: QuicConnection,
        stream_handler: Any = None,
        *,
        tls_setup: Callable[[tls.Context], None],
    ) -> None:
        super().__init__(quic, stream_handler)
        self._decoder = FrameDecoder()
        self._stream_failed = False
        self._ack_waiters: list[tuple[int, asyncio.Future[bool]]] = []
        self._handshake: asyncio.Future[bool] = self._loop.create_future()
        self.close_info: CloseInfo | None = None
        self._hook_tls(quic, tls_setup)

    @staticmethod
    def _hook_tls(quic: QuicConnection, tls_setup: Callable[[tls.Context], None]) -> None:
        """Runs tls_setup on the TLS context right after aioquic creates it (before any handshake byte)."""
        original = quic._initialize

        def initialize(peer_cid: bytes) -> None:
            original(peer_cid)
            tls_setup(quic.tls)

        quic._initialize = initialize  # type: ignore[method-assign]

    # -- hooks for subclasses

    def on_handshake(self, event: HandshakeCompleted) -> None:
        pass

    def on_frame(self, payload: bytes) -> None:
        pass

    def on_frame_error(self, error: FrameError) -> None:
        pass

    def on_closed(self, info: CloseInfo) -> None:
        pass

    # -- public helpers

    async def handshake(self) -> bool:
        """True once the handshake completed; False if the connection ended first."""
        return await self._handshake

    def send_message(self, message: Message) -> None:
        self.send_bytes(encode_message(message))

    def send_bytes(self, data: bytes, stream_id: int = CONTROL_STREAM_ID) -> None:
        self._quic.send_stream_data(stream_id, data)
        self.transmit()

    async def flush(self, stream_id: int = CONTROL_STREAM_ID, timeout: float = ERROR_FLUSH_TIMEOUT_S) -> bool:
        """Waits until the peer acknowledged everything written to the stream (bounded)."""
        if self._stream_acked(stream_id):
            return True
        waiter: asyncio.Future[bool] = self._loop.create_future()
        entry = (stream_id, waiter)
        self._ack_waiters.append(entry)
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            return False
        finally:
            if entry in self._ack_waiters:
                self._ack_waiters.remove(entry)

    async def close_with_error(self, code: int, text: str, in_reply_to: str | None = None) -> None:
        """Sends ERROR, waits briefly for its acknowledgement, then closes with application code N."""
        await self.close_after(error_message(code, text, in_reply_to), code)

    async def close_after(self, message: Message, code: int) -> None:
        self.send_message(message)
        await self.flush()
        self.close(error_code=code, reason_phrase=ERROR_NAMES.get(code, ""))

    @property
    def handshake_completed(self) -> bool:
        return self._handshake.done() and self._handshake.result()

    @property
    def is_ended(self) -> bool:
        return self.close_info is not None or self._quic._state in END_STATES

    # -- aioquic plumbing

    def datagram_received(self, data: bytes | str, addr: NetworkAddress) -> None:
        super().datagram_received(data, addr)
        self._wake_ack_waiters()
        self._notice_close()

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, HandshakeCompleted):
            self._handshake_completed(event)
        elif isinstance(event, StreamDataReceived):
            self._stream_data(event)
        elif isinstance(event, ConnectionTerminated):
            self._report_close(event, by_peer=False)

    def _handshake_completed(self, event: HandshakeCompleted) -> None:
        if not self._handshake.done():
            self._handshake.set_result(True)
        self.on_handshake(event)

    def _stream_data(self, event: StreamDataReceived) -> None:
        if event.stream_id != CONTROL_STREAM_ID or self._stream_failed or not self.handshake_completed:
            return  # only the control stream carries frames; other streams are ignored
        try:
            for payload in self._decoder.feed(event.data):
                self.on_frame(payload)
                if self.is_ended:
                    return
        except FrameError as error:
            self._stream_failed = True
            self.on_frame_error(error)

    def _notice_close(self) -> None:
        """Reports a close as soon as it begins (aioquic only raises ConnectionTerminated after the
        closing/draining period): DRAINING means the peer sent CONNECTION_CLOSE."""
        state = self._quic._state
        close_event = self._quic._close_event
        if close_event is not None and state in (QuicConnectionState.CLOSING, QuicConnectionState.DRAINING):
            self._report_close(close_event, by_peer=state == QuicConnectionState.DRAINING)

    def _report_close(self, event: ConnectionTerminated, by_peer: bool) -> None:
        if self.close_info is not None:
            return
        self.close_info = CloseInfo(event.error_code, event.frame_type, event.reason_phrase, by_peer)
        if not self._handshake.done():
            self._handshake.set_result(False)
        for _, waiter in self._ack_waiters:
            if not waiter.done():
                waiter.set_result(False)
        self.on_closed(self.close_info)

    def _stream_acked(self, stream_id: int) -> bool:
        stream = self._quic._streams.get(stream_id)
        if stream is None:
            return True
        sender = stream.sender
        return sender._buffer_start == sender._buffer_stop

    def _wake_ack_waiters(self) -> None:
        for stream_id, waiter in self._ack_waiters:
            if not waiter.done() and self._stream_acked(stream_id):
                waiter.set_result(True)


async def open_client(
    host: str, port: int, configuration: QuicConfiguration, factory: Callable[[QuicConnection], ControlProtocol]
) -> tuple[asyncio.DatagramTransport, ControlProtocol]:
    """Creates a UDP socket and starts the handshake (without waiting for it)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    family, addr = infos[0][0], infos[0][4]
    local = ("::", 0) if family == socket.AF_INET6 else ("0.0.0.0", 0)
    quic = QuicConnection(configuration=configuration)
    transport, protocol = await loop.create_datagram_endpoint(lambda: factory(quic), local_addr=local, family=family)
    assert isinstance(protocol, ControlProtocol)
    protocol.connect(addr)
    return transport, protocol


# --------------------------------------------------------------------------------------
# Client


@dataclass(frozen=True)
class Received:
    message: Message


@dataclass(frozen=True)
class Malformed:
    error: str


Incoming = Union[Received, Malformed, CloseInfo]


class ClientProtocol(ControlProtocol):
    """The listener side: queues what arrives on the control stream for the session to read."""

    def __init__(self, quic: QuicConnection, stream_handler: Any = None, *, pin: PinCheck) -> None:
        super().__init__(quic, stream_handler, tls_setup=partial(install_server_pin, pin=pin))
        self.pin = pin
        self.inbox: asyncio.Queue[Incoming] = asyncio.Queue()
        self.alpn: str | None = None

    def on_handshake(self, event: HandshakeCompleted) -> None:
        self.alpn = event.alpn_protocol

    def on_frame(self, payload: bytes) -> None:
        try:
            self.inbox.put_nowait(Received(parse_message(payload)))
        except FrameError as error:
            self._stream_failed = True
            self.on_frame_error(error)

    def on_frame_error(self, error: FrameError) -> None:
        self.inbox.put_nowait(Malformed(str(error)))

    def on_closed(self, info: CloseInfo) -> None:
        self.inbox.put_nowait(info)

    def open_control_stream(self) -> int:
        stream_id = self._quic.get_next_available_stream_id()
        if stream_id != CONTROL_STREAM_ID:
            raise RuntimeError(f"first bidirectional stream is {stream_id}, expected {CONTROL_STREAM_ID}")
        return stream_id


@dataclass(frozen=True)
class ClientSettings:
    host: str
    port: int
    identity: Identity | None
    pin: str
    alpn: str | None


def client_configuration(settings: ClientSettings) -> QuicConfiguration:
    configuration = base_configuration(is_client=True, alpn=settings.alpn)
    if settings.identity is not None:
        apply_identity(configuration, settings.identity)
    return configuration


async def connect_pinned(settings: ClientSettings) -> tuple[asyncio.DatagramTransport, ClientProtocol]:
    """Opens a connection whose handshake aborts unless the server matches the pin."""
    pin = PinCheck(settings.pin)
    factory = partial(ClientProtocol, pin=pin)
    transport, protocol = await open_client(settings.host, settings.port, client_configuration(settings), factory)
    assert isinstance(protocol, ClientProtocol)
    return transport, protocol


def report_failed_handshake(protocol: ClientProtocol) -> int:
    pin = protocol.pin
    if pin.mismatch:
        emit({"event": "pin-mismatch", "expected": pin.expected, "actual": pin.actual})
        return EXIT_PIN_MISMATCH
    if protocol.close_info is not None:
        emit(protocol.close_info.event())
        reason = protocol.close_info.reason or f"error code {protocol.close_info.error_code:#x}"
    else:
        reason = "connection ended"
    emit({"event": "error", "message": f"handshake failed: {reason}"})
    return EXIT_ERROR


def frame_payloads(sends: Sequence[tuple[str, str]]) -> list[bytes]:
    """Turns --send-json / --send-text / --send-raw-hex values into the bytes to write, in order."""
    payloads = []
    for kind, value in sends:
        if kind == "json":
            payloads.append(encode_frame(rfc8785.dumps(json.loads(value))))
        elif kind == "text":
            payloads.append(encode_frame(value.encode("utf-8")))
        else:
            payloads.append(bytes.fromhex(value))
    return payloads


async def collect(protocol: ClientProtocol, expect: int) -> int:
    """Prints received frames until `expect` arrived or the connection closed."""
    received = 0
    while received < expect:
        item = await protocol.inbox.get()
        if isinstance(item, Received):
            emit({"event": "frame", "json": item.message})
            received += 1
        elif isinstance(item, Malformed):
            emit({"event": "error", "message": f"peer sent a malformed frame: {item.error}"})
            await protocol.close_with_error(PROTOCOL_ERROR, item.error)
            return EXIT_ERROR
        else:
            return report_peer_close(item)
    return EXIT_OK


def report_peer_close(info: CloseInfo) -> int:
    emit(info.event())
    if info.is_application or info.error_code == QuicErrorCode.NO_ERROR:
        return EXIT_OK
    emit({"event": "error", "message": f"connection refused by peer: {info.reason or hex(info.error_code)}"})
    return EXIT_ERROR


async def client_session(settings: ClientSettings, payloads: list[bytes], expect: int) -> int:
    transport, protocol = await connect_pinned(settings)
    try:
        if not await protocol.handshake():
            return report_failed_handshake(protocol)
        if not protocol.pin.checked:
            protocol.close(error_code=INTERNAL_ERROR, reason_phrase="server certificate was not checked")
            emit({"event": "error", "message": "handshake completed without a server certificate to pin"})
            return EXIT_ERROR
        emit({"event": "handshake", "serverFingerprint": protocol.pin.actual, "alpn": protocol.alpn})
        stream_id = protocol.open_control_stream()
        for data in payloads:
            protocol.send_bytes(data, stream_id)
        status = await collect(protocol, expect)
        if not protocol.is_ended:
            await protocol.flush(stream_id)
            protocol.close(error_code=QuicErrorCode.NO_ERROR, reason_phrase="done")
        return status
    finally:
        if not protocol.is_ended:  # timeout or error: still tell the server
            protocol.close(error_code=QuicErrorCode.NO_ERROR, reason_phrase="client exiting")
        transport.close()


async def run_client(args: argparse.Namespace) -> int:
    settings = ClientSettings(
        host=args.host,
        port=args.port,
        identity=None if args.no_cert else load_identity(args.cert, args.key),
        pin=args.pin,
        alpn=args.alpn or None,
    )
    payloads = frame_payloads(args.sends or [])
    emit({"event": "ready"})  # start-up (imports) is over: --timeout counts from here
    try:
        async with asyncio.timeout(args.timeout):
            return await client_session(settings, payloads, args.expect)
    except TimeoutError:
        emit({"event": "timeout", "seconds": args.timeout})
        return EXIT_TIMEOUT
    except OSError as exc:
        emit({"event": "error", "message": f"network error: {exc}"})
        return EXIT_ERROR


# --------------------------------------------------------------------------------------
# Server (minimal monitor)


@dataclass
class MonitorSettings:
    trusted: frozenset[str]
    quiet: bool
    connection_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


class MonitorProtocol(ControlProtocol):
    """The monitor side of one connection."""

    def __init__(self, quic: QuicConnection, stream_handler: Any = None, *, settings: MonitorSettings) -> None:
        super().__init__(quic, stream_handler, tls_setup=require_client_certificate)
        self._settings = settings
        self._id = next(settings.connection_ids)
        self._trusted = False
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()

    def on_handshake(self, event: HandshakeCompleted) -> None:
        fingerprint = peer_fingerprint(self._quic)
        self._trusted = fingerprint in self._settings.trusted
        emit({"event": "connection", "clientFingerprint": fingerprint, "trusted": self._trusted, "connection": self._id})

    def on_frame(self, payload: bytes) -> None:
        if self._closing:
            return
        try:
            message = parse_message(payload)
        except FrameError as error:
            self.on_frame_error(error)
            return
        if not self._settings.quiet:
            emit({"event": "frame", "json": message, "connection": self._id})
        self._answer(monitor_reply(message, self._trusted))

    def on_frame_error(self, error: FrameError) -> None:
        emit({"event": "frame-error", "message": str(error), "connection": self._id})
        self._answer(Reply(error_message(PROTOCOL_ERROR, str(error)), PROTOCOL_ERROR))

    def on_closed(self, info: CloseInfo) -> None:
        if self.handshake_completed:
            emit({**info.event(), "connection": self._id})
        else:
            emit({"event": "handshake-failed", "errorCode": info.error_code, "reason": info.reason,
                  "byPeer": info.by_peer, "connection": self._id})

    def _answer(self, reply: Reply) -> None:
        if reply.close_code is None:
            if reply.message is not None:
                self.send_message(reply.message)
            return
        self._closing = True
        message = reply.message or error_message(reply.close_code, ERROR_NAMES[reply.close_code])
        task = asyncio.ensure_future(self.close_after(message, reply.close_code))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def server_configuration(identity: Identity) -> QuicConfiguration:
    configuration = base_configuration(is_client=False, alpn=ALPN)
    apply_identity(configuration, identity)
    return configuration


async def wait_for_stop_signal() -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()


async def run_server(args: argparse.Namespace) -> int:
    identity = load_identity(args.cert, args.key)
    settings = MonitorSettings(trusted=frozenset(args.trusted or []), quiet=args.quiet)
    server = await serve(
        args.host,
        args.port,
        configuration=server_configuration(identity),
        create_protocol=partial(MonitorProtocol, settings=settings),
    )
    assert server._transport is not None
    port = server._transport.get_extra_info("sockname")[1]
    emit({"event": "listening", "port": port, "fingerprint": identity.fingerprint})
    try:
        await wait_for_stop_signal()
    finally:
        server.close()
        await asyncio.sleep(0.05)  # let the CONNECTION_CLOSE datagrams leave
    emit({"event": "stopped"})
    return EXIT_OK


# --------------------------------------------------------------------------------------
# Benchmark


def percentile(samples: Sequence[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


async def bench_handshakes(settings: ClientSettings, count: int, timeout: float) -> list[float]:
    """Full mutual-auth handshakes with pinning, one after another; returns milliseconds each."""
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        transport, protocol = await connect_pinned(settings)
        try:
            async with asyncio.timeout(timeout):
                ok = await protocol.handshake()
            if not ok or not protocol.pin.checked:
                raise RuntimeError(f"handshake failed: {protocol.close_info}")
            samples.append((time.perf_counter() - start) * 1000)
            protocol.close()
        finally:
            transport.close()
    return samples


async def expect_pong(protocol: ClientProtocol, timestamp: int) -> None:
    item = await protocol.inbox.get()
    if not isinstance(item, Received) or item.message != {"type": "PONG", "timestamp": timestamp}:
        raise RuntimeError(f"expected PONG {timestamp}, got {item}")


async def bench_frames(settings: ClientSettings, count: int, timeout: float) -> tuple[float, float]:
    """PING->PONG round trips on one connection: sequential, then pipelined. Returns frames/s."""
    transport, protocol = await connect_pinned(settings)
    try:
        async with asyncio.timeout(timeout):
            if not await protocol.handshake():
                raise RuntimeError(f"handshake failed: {protocol.close_info}")
            protocol.open_control_stream()
            start = time.perf_counter()
            for i in range(count):
                protocol.send_message({"type": "PING", "timestamp": i})
                await expect_pong(protocol, i)
            sequential = count / (time.perf_counter() - start)
            start = time.perf_counter()
            for i in range(count):
                protocol._quic.send_stream_data(CONTROL_STREAM_ID, encode_message({"type": "PING", "timestamp": i}))
            protocol.transmit()
            for i in range(count):
                await expect_pong(protocol, i)
            pipelined = count / (time.perf_counter() - start)
        protocol.close()
        return sequential, pipelined
    finally:
        transport.close()


@dataclass
class LocalServer:
    """The `server` subcommand run as a child process for the benchmark."""

    process: asyncio.subprocess.Process
    port: int
    fingerprint: str
    drain: asyncio.Task[None]

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        self.drain.cancel()


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


async def start_local_server(directory: Path, client: Identity) -> LocalServer:
    cert, key = write_identity(generate_identity(str(uuid.uuid4())), directory / "server")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "server", "--host", "127.0.0.1", "--port", "0",
        "--cert", str(cert), "--key", str(key), "--trusted", client.fingerprint, "--quiet",
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 15)
        ready = json.loads(line)
    except (TimeoutError, ValueError):
        process.kill()
        await process.wait()
        raise RuntimeError("the benchmark server did not start")
    drain = asyncio.ensure_future(_drain(process.stdout))
    return LocalServer(process, ready["port"], ready["fingerprint"], drain)


async def run_bench_against(settings: ClientSettings, args: argparse.Namespace) -> Message:
    result: Message = {"event": "benchmark", "impl": "aioquic", "handshakeP50Ms": None, "handshakeP99Ms": None,
                       "framesPerSecond": None, "pipelinedFramesPerSecond": None}
    if args.mode in ("handshake", "all"):
        samples = await bench_handshakes(settings, args.connections, args.timeout)
        result["handshakeP50Ms"] = round(percentile(samples, 50), 3)
        result["handshakeP99Ms"] = round(percentile(samples, 99), 3)
        print(f"handshake: {len(samples)} sequential connections, p50 {result['handshakeP50Ms']} ms, "
              f"p99 {result['handshakeP99Ms']} ms, min {min(samples):.3f} ms, max {max(samples):.3f} ms")
    if args.mode in ("frames", "all"):
        sequential, pipelined = await bench_frames(settings, args.frames, args.timeout)
        result["framesPerSecond"] = round(sequential, 1)
        result["pipelinedFramesPerSecond"] = round(pipelined, 1)
        print(f"frames: {args.frames} sequential PING->PONG round trips, {sequential:.1f} round trips/s")
        print(f"frames: {args.frames} pipelined PINGs then PONGs, {pipelined:.1f} PONGs/s")
    result.update(connections=args.connections, frames=args.frames, mode=args.mode)
    return result


async def run_bench(args: argparse.Namespace) -> int:
    client = load_identity(args.cert, args.key) if args.cert else generate_identity(str(uuid.uuid4()))
    try:
        if args.target_host:
            settings = ClientSettings(args.target_host, args.target_port, client, args.pin, ALPN)
            result = await run_bench_against(settings, args)
            result["target"] = f"{args.target_host}:{args.target_port}"
        else:
            with tempfile.TemporaryDirectory(prefix="cribcall-bench-") as directory:
                server = await start_local_server(Path(directory), client)
                try:
                    settings = ClientSettings("127.0.0.1", server.port, client, server.fingerprint, ALPN)
                    result = await run_bench_against(settings, args)
                    result["target"] = "aioquic server (child process)"
                finally:
                    await server.stop()
    except (RuntimeError, TimeoutError, OSError) as exc:
        emit({"event": "error", "message": f"benchmark failed: {exc}"})
        return EXIT_ERROR
    emit(result)
    return EXIT_OK


# --------------------------------------------------------------------------------------
# Command line


def run_gen_cert(args: argparse.Namespace) -> int:
    identity = generate_identity(args.device_id)
    write_identity(identity, args.out)
    emit({"fingerprint": identity.fingerprint, "deviceId": identity.device_id})
    return EXIT_OK


def device_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a UUID: {text!r}") from exc


def port_number(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: {text}")
    return value


class AppendSend(argparse.Action):
    """Collects --send-json / --send-text / --send-raw-hex into one ordered list of (kind, value)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sends = list(getattr(namespace, self.dest) or [])
        sends.append((self.const, values))
        setattr(namespace, self.dest, sends)


def add_gen_cert(subparsers: Any) -> None:
    p = subparsers.add_parser("gen-cert", help="write a self-signed Ed25519 identity (cert.pem, key.pem)")
    p.add_argument("--out", type=Path, required=True, help="directory for cert.pem and key.pem")
    p.add_argument("--device-id", type=device_id, default=None, help="UUID (default: random)")
    p.set_defaults(func=run_gen_cert)


def add_client(subparsers: Any) -> None:
    p = subparsers.add_parser("client", help="connect, pin, send frames on stream 0, print what comes back")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=port_number, required=True)
    p.add_argument("--cert", type=Path)
    p.add_argument("--key", type=Path)
    p.add_argument("--pin", type=normalize_fingerprint, required=True, help="expected server fingerprint")
    p.add_argument("--send-json", dest="sends", action=AppendSend, const="json", metavar="JSON",
                   help="a message: sent framed, in RFC 8785 form (repeatable, keeps order)")
    p.add_argument("--send-text", dest="sends", action=AppendSend, const="text", metavar="TEXT",
                   help="a frame whose payload is TEXT as UTF-8, verbatim (repeatable)")
    p.add_argument("--send-raw-hex", dest="sends", action=AppendSend, const="hex", metavar="HEX",
                   help="raw bytes written as-is, no length prefix added (repeatable)")
    p.add_argument("--expect", type=int, default=0, help="frames to wait for (default 0)")
    p.add_argument("--timeout", type=float, default=10.0, help="overall seconds (default 10)")
    p.add_argument("--alpn", default=ALPN, help=argparse.SUPPRESS)
    p.add_argument("--no-cert", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--verbose", action="store_true", help="aioquic debug log on stderr")
    p.set_defaults(func=run_client, is_async=True)


def add_server(subparsers: Any) -> None:
    p = subparsers.add_parser("server", help="minimal monitor: PING->PONG for trusted clients")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=port_number, required=True, help="UDP port, 0 = pick a free one")
    p.add_argument("--cert", type=Path, required=True)
    p.add_argument("--key", type=Path, required=True)
    p.add_argument("--trusted", type=normalize_fingerprint, action="append", metavar="FINGERPRINT")
    p.add_argument("--quiet", action="store_true", help="do not print frame events")
    p.add_argument("--verbose", action="store_true", help="aioquic debug log on stderr")
    p.set_defaults(func=run_server, is_async=True)


def add_bench(subparsers: Any) -> None:
    p = subparsers.add_parser("bench", help="handshake latency and frame rate")
    p.add_argument("--mode", choices=("handshake", "frames", "all"), default="all")
    p.add_argument("--connections", type=int, default=50)
    p.add_argument("--frames", type=int, default=2000)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per measured phase")
    p.add_argument("--target-host", help="bench another server instead of a local aioquic one")
    p.add_argument("--target-port", type=port_number)
    p.add_argument("--pin", type=normalize_fingerprint, help="the target's fingerprint")
    p.add_argument("--cert", type=Path, help="client identity (default: a fresh one)")
    p.add_argument("--key", type=Path)
    p.set_defaults(func=run_bench, is_async=True, verbose=False)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="CribCall QUIC control-channel interop peer (aioquic)",
        fromfile_prefix_chars="@",  # @FILE: one argument per line, for frames longer than argv allows
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for add in (add_gen_cert, add_client, add_server, add_bench):
        add(subparsers)
    return parser


def validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.command == "gen-cert" and args.device_id is None:
        args.device_id = str(uuid.uuid4())
    if args.command == "client":
        if not args.no_cert and (args.cert is None or args.key is None):
            parser.error("client needs --cert and --key")
        try:
            frame_payloads(args.sends or [])
        except ValueError as exc:
            parser.error(f"bad frame argument: {exc}")
    if args.command == "bench":
        if args.target_host and (args.target_port is None or args.pin is None):
            parser.error("--target-host needs --target-port and --pin")
        if (args.cert is None) != (args.key is None):
            parser.error("give both --cert and --key, or neither")
        if args.connections < 1 or args.frames < 1:
            parser.error("--connections and --frames must be positive")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    validate(parser, args)
    if getattr(args, "verbose", False):
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    try:
        if getattr(args, "is_async", False):
            return int(asyncio.run(args.func(args)))
        return int(args.func(args))
    except (OSError, ValueError) as exc:
        emit({"event": "error", "message": str(exc)})
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
