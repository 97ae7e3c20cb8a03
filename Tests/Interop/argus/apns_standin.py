#!/usr/bin/env python3
"""A local stand-in for Apple's Push Notification service (APNs): what argus-hub's APNs client is tested against,
HTTP/2 over TLS from Python's ssl module and the pure-Python h2, an implementation nobody here wrote.

    apns_standin.py --port 0 --cert CERT.pem --key KEY.pem --public-key PROVIDER_PUB.pem --team-id TEAM
                    --key-id KID --topic com.example.argus [--unregistered HEX]... [--fail-first HEX]...
                    [--idle-timeout 600]
    apns_standin.py --make-cert DIR
    apns_standin.py --make-provider-key DIR [--key-id KID]

The server binds 127.0.0.1 (--port 0: any free port) and speaks only HTTP/2 over TLS 1.2 or later with ALPN "h2";
a client that does not negotiate "h2" is disconnected after the handshake. It answers POST /3/device/<device token>
as APNs does ("Sending notification requests to APNs", "Establishing a token-based connection to APNs"), checking
in this order and answering the first failure with JSON {"reason": ...}:

1. :method POST, else 405 MethodNotAllowed; :path /3/device/<token>, else 404 BadPath (400 MissingDeviceToken for
   "/3/device/" alone); the token 64 to 200 hex digits, else 400 BadDeviceToken.
2. The provider token: `authorization: bearer <JWT>`, an ES256 JWS with header {"alg": "ES256", "kid": --key-id}
   and claims {"iss": --team-id, "iat": <int>}; its raw r||s signature (64 bytes) is verified with the P-256 key
   of --public-key (a public key PEM; a PKCS#8 private key such as the .p8 is also accepted, its public half used).
   No authorization header: 403 MissingProviderToken; a malformed token, another alg, kid or iss, a bad signature,
   or an iat more than 300 s in the future: 403 InvalidProviderToken; an iat more than 3600 s old: 403
   ExpiredProviderToken.
3. apns-topic: missing → 400 MissingTopic, not --topic → 400 BadTopic. apns-push-type: "alert" or "background",
   else (missing too) 400 InvalidPushType. Optional: apns-priority 5 or 10 (else 400 BadPriority), apns-expiration
   an integer (else 400 BadExpirationDate), apns-id a UUID (else 400 BadMessageId), apns-collapse-id at most 64
   bytes (else 400 BadCollapseId). A repeated apns-* or authorization header: 400 DuplicateHeaders.
4. The body: empty → 400 PayloadEmpty; over 4096 bytes → 413 PayloadTooLarge; not a JSON object, or an "alert"
   push without aps.alert → 400 BadPayload (this reason is the stand-in's own: Apple documents none for it).
5. A valid request to a token given with --unregistered: 410 {"reason": "Unregistered", "timestamp": <ms since the
   epoch: this server's start>}. The first valid request to a token given with --fail-first: 503 {"reason":
   "ServiceUnavailable"}, and 200 from then on (for testing retries).
6. Otherwise 200 with no body. Every answer carries an apns-id header: the request's, or a new UUID.

Bounds: at most 64 concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS; h2 ends a connection that
opens more with GOAWAY), header lists of at most 16 KiB, at most 8 KiB of a body read (past that the request is
answered 413 at once and its stream reset with NO_ERROR), 256 connections at once, a 10 s TLS handshake, and a
connection idle for --idle-timeout seconds gets GOAWAY {"reason": "IdleTimeout"}. A connection that breaks or
misbehaves is closed without affecting the others. SIGTERM or SIGINT: GOAWAY {"reason": "Shutdown"} to every
connection, then exit 0.

stdout, one JSON line each, flushed: {"event": "ready", "port": N} once listening; then for every request answered
{"event": "push", "status": 200, "token": <from the :path, or null>, "topic": ..., "push_type": ..., "priority":
<5, 10, as sent, or null>, "apns_id": <the answer's apns-id>, "payload": <the parsed JSON or null>, "reason": null
or "...", "jwt_iat": <int or null>, "jwt_kid": ..., "token_serial": <1 for the first distinct JWT string seen, 2
for the next, ...; null without one>, "connection": <1, 2, ... as connections are accepted>, "stream": <HTTP/2
stream id>}. Diagnostics go to stderr.

Fixtures, so that a test needs nothing but this script (both may be given at once; the server is not started):
--make-cert DIR writes DIR/cert.pem and DIR/key.pem, a self-signed P-256 server certificate for "localhost" (SAN
DNS localhost and IP 127.0.0.1, valid for one day) and its PKCS#8 key, and prints {"event": "cert", "cert": PATH,
"key": PATH}. --make-provider-key DIR writes a P-256 provider key as Apple's .p8 is (PKCS#8 PEM, "-----BEGIN
PRIVATE KEY-----") to DIR/AuthKey_<KID>.p8 and its public key to DIR/provider-public.pem, and prints {"event":
"provider-key", "key_id": KID, "p8": PATH, "public_key": PATH}; KID is --key-id, or 10 random letters and digits.

Exit status: 0 after SIGTERM/SIGINT or after writing fixtures, 2 for bad arguments, unusable key or certificate
files, or a missing package.

Needs: pip install h2==4.4.1 hyperframe==6.1.0 hpack==4.2.0 cryptography==50.0.2.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import datetime
import hashlib
import json
import os
import re
import secrets
import signal
import ssl
import string
import sys
import time
import uuid
from pathlib import Path

try:
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError:  # pragma: no cover - reported in main()
    x509 = None

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings
    from h2.errors import ErrorCodes
except ImportError:  # pragma: no cover - reported in main()
    h2 = None

TOKEN_MAX_AGE = 3600          # s: an older provider token is ExpiredProviderToken
IAT_FUTURE_SKEW = 300         # s: a provider token issued further ahead is InvalidProviderToken
PAYLOAD_LIMIT = 4096          # bytes of JSON APNs accepts for a notification
BODY_READ_LIMIT = 8192        # bytes of a body read at most
MAX_STREAMS = 64              # concurrent streams per connection
MAX_HEADER_LIST = 16384       # bytes, SETTINGS_MAX_HEADER_LIST_SIZE
MAX_CONNECTIONS = 256
HANDSHAKE_TIMEOUT = 10.0
READ_SIZE = 65536
JWT_MEMORY = 100_000          # distinct provider tokens remembered for token_serial

HEX_TOKEN = re.compile(r"[0-9a-fA-F]{64,200}")
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
B64URL = re.compile(r"[A-Za-z0-9_-]*")
PUSH_TYPES = ("alert", "background")
SINGLE_HEADERS = ("authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-id",
                  "apns-collapse-id")


def log(message: str) -> None:
    print(f"apns_standin: {message}", file=sys.stderr, flush=True)


def emit(record: dict) -> None:
    """One JSON line on stdout; a reader that went away never takes the server down."""
    try:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


# --- fixtures ---------------------------------------------------------------------------------------------------

def write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def make_cert(directory: Path) -> dict:
    import ipaddress

    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    write_private(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
    return {"event": "cert", "cert": str(cert_path.resolve()), "key": str(key_path.resolve())}


def make_provider_key(directory: Path, key_id: str | None) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    if not key_id:
        key_id = "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(10))
    key = ec.generate_private_key(ec.SECP256R1())
    p8_path, public_path = directory / f"AuthKey_{key_id}.p8", directory / "provider-public.pem"
    write_private(p8_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
    public_path.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo))
    return {"event": "provider-key", "key_id": key_id, "p8": str(p8_path.resolve()),
            "public_key": str(public_path.resolve())}


def load_provider_public_key(path: Path):
    data = path.read_bytes()
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        try:
            key = serialization.load_pem_private_key(data, password=None).public_key()
        except (ValueError, TypeError):
            raise ValueError("neither a PEM public key nor an unencrypted PKCS#8 private key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("not a P-256 key")
    return key


# --- provider tokens --------------------------------------------------------------------------------------------

def b64url_decode(text: str) -> bytes:
    if not B64URL.fullmatch(text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ProviderTokens:
    def __init__(self, public_key, team_id: str, key_id: str) -> None:
        self.public_key, self.team_id, self.key_id = public_key, team_id, key_id
        self.serials: dict[bytes, int] = {}
        self.count = 0

    def serial(self, jwt: str) -> int:
        digest = hashlib.sha256(jwt.encode("utf-8", "replace")).digest()
        known = self.serials.get(digest)
        if known is not None:
            return known
        self.count += 1
        if len(self.serials) < JWT_MEMORY:
            self.serials[digest] = self.count
        return self.count

    def check(self, jwt: str) -> tuple[str | None, int | None, str | None]:
        """(reason or None, iat, kid) of a provider token."""
        iat = kid = None
        try:
            parts = jwt.split(".")
            if len(parts) != 3:
                return "InvalidProviderToken", None, None
            header = json.loads(b64url_decode(parts[0]))
            claims = json.loads(b64url_decode(parts[1]))
            if not isinstance(header, dict) or not isinstance(claims, dict):
                return "InvalidProviderToken", None, None
            if isinstance(header.get("kid"), str):
                kid = header["kid"]
            if isinstance(claims.get("iat"), int) and not isinstance(claims.get("iat"), bool):
                iat = claims["iat"]
            if header.get("alg") != "ES256" or kid != self.key_id or claims.get("iss") != self.team_id \
                    or iat is None:
                return "InvalidProviderToken", iat, kid
            signature = b64url_decode(parts[2])
            if len(signature) != 64:
                return "InvalidProviderToken", iat, kid
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            self.public_key.verify(der, f"{parts[0]}.{parts[1]}".encode("ascii"), ec.ECDSA(hashes.SHA256()))
        except (ValueError, binascii.Error, UnicodeError, InvalidSignature, RecursionError):
            return "InvalidProviderToken", iat, kid
        now = int(time.time())
        if iat - now > IAT_FUTURE_SKEW:
            return "InvalidProviderToken", iat, kid
        if now - iat > TOKEN_MAX_AGE:
            return "ExpiredProviderToken", iat, kid
        return None, iat, kid


# --- requests ---------------------------------------------------------------------------------------------------

class Request:
    def __init__(self, stream_id: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.stream_id = stream_id
        self.headers: list[tuple[str, str]] = [
            (k.decode("latin-1").lower(), v.decode("utf-8", "replace")) for k, v in headers]
        self.body = bytearray()
        self.received = 0
        self.answered = False

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]

    def get(self, name: str) -> str | None:
        found = self.values(name)
        return found[0] if found else None


class Service:
    """What APNs decides about one request; state shared by every connection."""

    def __init__(self, args, tokens: ProviderTokens) -> None:
        self.topic = args.topic
        self.tokens = tokens
        self.unregistered = {t.lower() for t in args.unregistered}
        self.fail_first = {t.lower() for t in args.fail_first}
        self.failed_once: set[str] = set()
        self.started_ms = int(time.time() * 1000)

    def decide(self, request: Request, connection: int) -> tuple[int, dict | None, dict]:
        """(status, JSON body or None, the record printed); sets record["apns_id"] to the answer's."""
        priority = request.get("apns-priority")
        record = {
            "event": "push", "status": None, "token": None, "topic": request.get("apns-topic"),
            "push_type": request.get("apns-push-type"),
            "priority": int(priority) if priority is not None and priority.isdigit() and len(priority) < 6
            else priority,
            "apns_id": None, "payload": None, "reason": None, "jwt_iat": None, "jwt_kid": None,
            "token_serial": None, "connection": connection, "stream": request.stream_id,
        }
        request_id = request.get("apns-id")
        record["apns_id"] = request_id if request_id is not None and UUID_RE.fullmatch(request_id) \
            else str(uuid.uuid4())
        if request.received and len(request.body) == request.received and request.received <= PAYLOAD_LIMIT:
            try:
                record["payload"] = json.loads(bytes(request.body).decode("utf-8"))
            except (ValueError, UnicodeError, RecursionError):
                pass
        authorization = request.get("authorization")
        jwt_reason = None
        if authorization is not None:
            scheme, _, jwt = authorization.strip().partition(" ")
            jwt = jwt.strip()
            if scheme.lower() == "bearer" and jwt:
                record["token_serial"] = self.tokens.serial(jwt)
                jwt_reason, record["jwt_iat"], record["jwt_kid"] = self.tokens.check(jwt)
            else:
                jwt_reason = "InvalidProviderToken"

        def answer(status: int, reason: str | None = None, **extra):
            record["status"], record["reason"] = status, reason
            body = None if reason is None else {"reason": reason, **extra}
            return status, body, record

        path = request.get(":path") or ""
        if path.startswith("/3/device/"):
            token = path[len("/3/device/"):]
            record["token"] = token or None
        else:
            token = None
        if request.get(":method") != "POST":
            return answer(405, "MethodNotAllowed")
        if token is None or "/" in token or "?" in token:
            return answer(404, "BadPath")
        if not token:
            return answer(400, "MissingDeviceToken")
        if not HEX_TOKEN.fullmatch(token):
            return answer(400, "BadDeviceToken")
        if any(len(request.values(name)) > 1 for name in SINGLE_HEADERS):
            return answer(400, "DuplicateHeaders")
        if authorization is None:
            return answer(403, "MissingProviderToken")
        if jwt_reason is not None:
            return answer(403, jwt_reason)
        topic = request.get("apns-topic")
        if topic is None or topic == "":
            return answer(400, "MissingTopic")
        if topic != self.topic:
            return answer(400, "BadTopic")
        if request.get("apns-push-type") not in PUSH_TYPES:
            return answer(400, "InvalidPushType")
        if priority is not None and priority not in ("5", "10"):
            return answer(400, "BadPriority")
        expiration = request.get("apns-expiration")
        if expiration is not None and not re.fullmatch(r"[0-9]{1,12}", expiration):
            return answer(400, "BadExpirationDate")
        if request_id is not None and not UUID_RE.fullmatch(request_id):
            return answer(400, "BadMessageId")
        collapse_id = request.get("apns-collapse-id")
        if collapse_id is not None and len(collapse_id.encode("utf-8")) > 64:
            return answer(400, "BadCollapseId")
        if request.received == 0:
            return answer(400, "PayloadEmpty")
        if request.received > PAYLOAD_LIMIT:
            return answer(413, "PayloadTooLarge")
        payload = record["payload"]
        if not isinstance(payload, dict):
            return answer(400, "BadPayload")
        if record["push_type"] == "alert" and not (isinstance(payload.get("aps"), dict) and "alert" in payload["aps"]):
            return answer(400, "BadPayload")
        lowered = token.lower()
        if lowered in self.unregistered:
            return answer(410, "Unregistered", timestamp=self.started_ms)
        if lowered in self.fail_first and lowered not in self.failed_once:
            self.failed_once.add(lowered)
            return answer(503, "ServiceUnavailable")
        return answer(200)


# --- connections ------------------------------------------------------------------------------------------------

class Connection:
    def __init__(self, server: "Server", number: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server, self.number, self.reader, self.writer = server, number, reader, writer
        self.requests: dict[int, Request] = {}
        self.pending: dict[int, bytes] = {}
        self.h2 = None

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)
            await self.writer.drain()

    def goaway(self, reason: str) -> None:
        """Queue a GOAWAY with APNs's JSON reason as debug data; flushed by the caller."""
        if self.h2 is None:
            return
        try:
            self.h2.close_connection(error_code=ErrorCodes.NO_ERROR,
                                     additional_data=json.dumps({"reason": reason}).encode())
        except h2.exceptions.ProtocolError:
            pass

    async def close(self, reason: str | None) -> None:
        if reason is not None:
            self.goaway(reason)
        try:
            if self.h2 is not None:
                await asyncio.wait_for(self.flush(), 2)
        except Exception:  # the peer may be gone already
            pass
        self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), 2)
        except Exception:
            pass

    async def run(self) -> None:
        ssl_object = self.writer.get_extra_info("ssl_object")
        alpn = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
        if alpn != "h2":
            log(f"connection {self.number}: ALPN {alpn!r}, not 'h2': closed")
            return
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: MAX_STREAMS,
            h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: MAX_HEADER_LIST,
        })
        # initial_values count as in force from the start, so h2 never passes this one to its HPACK decoder itself
        self.h2.decoder.max_header_list_size = MAX_HEADER_LIST
        self.h2.initiate_connection()
        await self.flush()
        while True:
            try:
                data = await asyncio.wait_for(self.reader.read(READ_SIZE), self.server.idle_timeout)
            except asyncio.TimeoutError:
                self.goaway("IdleTimeout")
                await self.flush()
                return
            if not data:
                return
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError as error:
                log(f"connection {self.number}: HTTP/2 protocol error: {error!r}: closed")
                await self.flush()  # the GOAWAY h2 prepared
                return
            ended = False
            for event in events:
                ended |= self.handle(event)
            await self.flush()
            if ended:
                return

    def handle(self, event) -> bool:
        """True when the peer ended the connection."""
        if isinstance(event, h2.events.RequestReceived):
            self.requests[event.stream_id] = Request(event.stream_id, event.headers)
        elif isinstance(event, h2.events.DataReceived):
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            request = self.requests.get(event.stream_id)
            if request is not None and not request.answered:
                request.received += len(event.data)
                room = BODY_READ_LIMIT - len(request.body)
                if room > 0:
                    request.body += event.data[:room]
                if request.received > BODY_READ_LIMIT:
                    self.answer(request, reset=True)
        elif isinstance(event, h2.events.StreamEnded):
            request = self.requests.get(event.stream_id)
            if request is not None and not request.answered:
                self.answer(request)
            self.requests.pop(event.stream_id, None)
        elif isinstance(event, h2.events.StreamReset):
            self.requests.pop(event.stream_id, None)
            self.pending.pop(event.stream_id, None)
        elif isinstance(event, h2.events.WindowUpdated):
            for stream_id in list(self.pending):
                self.send_pending(stream_id)
        elif isinstance(event, h2.events.ConnectionTerminated):
            return True
        return False

    def answer(self, request: Request, reset: bool = False) -> None:
        request.answered = True
        status, body, record = self.server.service.decide(request, self.number)
        emit(record)
        headers = [(":status", str(status)), ("apns-id", record["apns_id"])]
        data = b""
        if body is not None:
            data = json.dumps(body).encode()
            headers += [("content-type", "application/json; charset=utf-8"), ("content-length", str(len(data)))]
        try:
            self.h2.send_headers(request.stream_id, headers, end_stream=not data)
            if data:
                self.pending[request.stream_id] = data
                self.send_pending(request.stream_id)
            if reset and request.stream_id not in self.pending:
                # RFC 9113 8.1: a complete answer before the whole request, then RST_STREAM NO_ERROR.
                self.h2.reset_stream(request.stream_id, ErrorCodes.NO_ERROR)
                self.requests.pop(request.stream_id, None)
        except h2.exceptions.StreamClosedError:
            self.pending.pop(request.stream_id, None)

    def send_pending(self, stream_id: int) -> None:
        data = self.pending.get(stream_id)
        if data is None:
            return
        try:
            size = min(len(data), self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size)
            if size <= 0:
                return
            rest = data[size:]
            self.h2.send_data(stream_id, data[:size], end_stream=not rest)
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            self.pending.pop(stream_id, None)
            return
        if rest:
            self.pending[stream_id] = rest
        else:
            del self.pending[stream_id]


class Server:
    def __init__(self, args, service: Service) -> None:
        self.args, self.service = args, service
        self.idle_timeout = args.idle_timeout
        self.count = 0
        self.connections: dict[int, Connection] = {}
        self.tasks: set[asyncio.Task] = set()

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.count += 1
        number = self.count
        if len(self.connections) >= MAX_CONNECTIONS:
            log(f"connection {number}: over {MAX_CONNECTIONS} connections: closed")
            writer.close()
            return
        connection = Connection(self, number, reader, writer)
        self.connections[number] = connection
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        try:
            await connection.run()
        except asyncio.CancelledError:
            pass
        except Exception as error:  # a broken connection never takes the server down
            log(f"connection {number}: {type(error).__name__}: {error}")
        finally:
            self.connections.pop(number, None)
            if task is not None:
                self.tasks.discard(task)
            await connection.close(None)

    async def shutdown(self) -> None:
        await asyncio.gather(*(c.close("Shutdown") for c in list(self.connections.values())),
                             return_exceptions=True)
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=3)


def quiet_exceptions(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    error = context.get("exception")
    log(f"{context.get('message', 'error')}: {type(error).__name__ if error else ''} {error or ''}".rstrip())


async def serve(args, ssl_context: ssl.SSLContext, service: Service) -> int:
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(quiet_exceptions)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    server = Server(args, service)
    listener = await asyncio.start_server(server.accept, "127.0.0.1", args.port, ssl=ssl_context,
                                          ssl_handshake_timeout=HANDSHAKE_TIMEOUT)
    port = listener.sockets[0].getsockname()[1]
    emit({"event": "ready", "port": port})
    log(f"listening on 127.0.0.1:{port}, topic {args.topic}, team {args.team_id}, key {args.key_id}")
    await stop.wait()
    log("stopping")
    listener.close()
    await server.shutdown()
    return 0


def hex_token(text: str) -> str:
    if not HEX_TOKEN.fullmatch(text):
        raise argparse.ArgumentTypeError("a device token is 64 to 200 hex digits")
    return text.lower()


def main() -> int:
    ap = argparse.ArgumentParser(description="A local stand-in for APNs (HTTP/2 over TLS).")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cert", type=Path, help="TLS server certificate (PEM)")
    ap.add_argument("--key", type=Path, help="its private key (PEM)")
    ap.add_argument("--public-key", type=Path, help="the provider's P-256 public key (PEM) that signs the JWTs")
    ap.add_argument("--team-id", help="the JWT's iss")
    ap.add_argument("--key-id", help="the JWT's kid")
    ap.add_argument("--topic", help="the apns-topic accepted (the app's bundle ID)")
    ap.add_argument("--unregistered", type=hex_token, action="append", default=[], metavar="HEX")
    ap.add_argument("--fail-first", type=hex_token, action="append", default=[], metavar="HEX")
    ap.add_argument("--idle-timeout", type=float, default=600.0, metavar="SECONDS")
    ap.add_argument("--make-cert", type=Path, metavar="DIR")
    ap.add_argument("--make-provider-key", type=Path, metavar="DIR")
    args = ap.parse_args()

    if x509 is None:
        log("needs: pip install cryptography==50.0.2")
        return 2
    if args.make_cert or args.make_provider_key:
        try:
            if args.make_cert:
                emit(make_cert(args.make_cert))
            if args.make_provider_key:
                emit(make_provider_key(args.make_provider_key, args.key_id))
        except OSError as error:
            log(f"cannot write the fixtures: {error}")
            return 2
        return 0

    missing = [f"--{n.replace('_', '-')}" for n in ("cert", "key", "public_key", "team_id", "key_id", "topic")
               if not getattr(args, n)]
    if missing:
        ap.error(f"the server needs {' '.join(missing)}")
    if not 0 <= args.port <= 65535 or args.idle_timeout <= 0:
        ap.error("--port is 0 to 65535, --idle-timeout above 0")
    if h2 is None:
        log("needs: pip install h2==4.4.1 hyperframe==6.1.0 hpack==4.2.0")
        return 2
    try:
        public_key = load_provider_public_key(args.public_key)
    except (OSError, ValueError, TypeError) as error:
        log(f"--public-key {args.public_key}: {error}")
        return 2
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["h2"])
    context.options |= ssl.OP_NO_COMPRESSION
    try:
        context.load_cert_chain(args.cert, args.key)
    except (OSError, ssl.SSLError) as error:
        log(f"--cert/--key: {error}")
        return 2
    service = Service(args, ProviderTokens(public_key, args.team_id, args.key_id))
    try:
        return asyncio.run(serve(args, context, service))
    except OSError as error:
        log(f"cannot listen on 127.0.0.1:{args.port}: {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
