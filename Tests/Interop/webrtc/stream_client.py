#!/usr/bin/env python3
"""An independent CribCall listener (aioquic + aiortc) that pairs by QR code and receives a live audio stream.

    stream_client.py --host 127.0.0.1 --port P --qr 'QR JSON' [--seconds 3] [--timeout 40]

1. Makes a fresh Ed25519 identity, connects over QUIC pinning the QR's monitorCertFingerprint.
2. Pairs by QR (PROTOCOL.md §5): PAIR_REQUEST with authTag = HMAC(k, JCS(T)), checks PAIR_ACCEPTED.confirmTag.
3. START_STREAM_REQUEST {sessionId, mediaType: audio}; answers the monitor's WEBRTC_OFFER with aiortc and trickles
   ICE both ways (§9); decodes Opus for --seconds after the first frame; END_STREAM; closes.

Events, one JSON object per line on stdout: ready (start-up done; --timeout counts from here), paired, stream_accepted, offer, answer, first_frame, decoded, ended,
or error (then exit status 1). Logs go to stderr. The QUIC parts come from ../quic/cribcall_peer.py.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import sys
import time
import uuid
from pathlib import Path

import aioice.ice
import rfc8785
# aiortc is imported here, before the "ready" line, not when the stream starts: importing it has taken 20 s on a
# loaded machine, which would have counted against the monitor's deadline for the first media.
from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.sdp import candidate_from_sdp
import aiortc.codecs.opus  # noqa: F401
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import hashes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "quic"))
import cribcall_peer as peer  # noqa: E402

START = time.monotonic()


def log(*parts: object) -> None:
    print(f"[stream_client {1000 * (time.monotonic() - START):8.1f} ms]", *parts, file=sys.stderr, flush=True)


class ClientError(Exception):
    pass


# ----------------------------------------------------------------------------------------------------------------
# QR pairing (PROTOCOL.md §5)


def qr_key(token: str) -> bytes:
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    if len(raw) != 16:
        raise ClientError(f"pairingToken decodes to {len(raw)} bytes, expected 16")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"cribcall/qr/v1", info=b"").derive(raw)


def pair_request(qr: dict, identity: peer.Identity, server_fingerprint: str) -> tuple[dict, bytes, bytes]:
    """Returns PAIR_REQUEST, the key k and JCS(T)."""
    spki = identity.certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    transcript = {
        "monitorId": qr["monitorId"],
        "monitorCertFingerprint": server_fingerprint,  # as seen in TLS
        "listenerId": identity.device_id,
        "listenerPublicKey": base64.b64encode(spki).decode(),
        "listenerCertFingerprint": identity.fingerprint,
    }
    key = qr_key(qr["pairingToken"])
    canonical = rfc8785.dumps(transcript)
    tag = base64.b64encode(hmac.new(key, canonical, hashlib.sha256).digest()).decode()
    request = {
        "type": "PAIR_REQUEST",
        "listenerId": transcript["listenerId"],
        "listenerName": "aiortc interop listener",
        "listenerPublicKey": transcript["listenerPublicKey"],
        "listenerCertFingerprint": transcript["listenerCertFingerprint"],
        "authTag": tag,
    }
    return request, key, canonical


# ----------------------------------------------------------------------------------------------------------------
# The session


class Session:
    def __init__(self, protocol: peer.ClientProtocol, args: argparse.Namespace) -> None:
        self.protocol = protocol
        self.args = args
        self.session_id = str(uuid.uuid4())
        self.pc = None
        self.samples = 0
        self.frames = 0
        self.rates: set[int] = set()
        self.codec: str | None = None
        self.first_frame: float | None = None
        self.decoded = asyncio.Event()
        self.failure: str | None = None
        self.remote_candidates = 0

    async def next_message(self) -> dict:
        item = await self.protocol.inbox.get()
        if isinstance(item, peer.Received):
            return item.message
        if isinstance(item, peer.Malformed):
            raise ClientError(f"monitor sent a malformed frame: {item.error}")
        raise ClientError(f"connection closed: code {item.error_code:#x} {item.reason!r}")

    async def pair(self, qr: dict, identity: peer.Identity) -> None:
        request, key, canonical = pair_request(qr, identity, self.protocol.pin.actual)
        self.protocol.send_message(request)
        while True:
            message = await self.next_message()
            kind = message.get("type")
            if kind == "PAIR_ACCEPTED":
                expected = base64.b64encode(hmac.new(key, b"monitor" + canonical, hashlib.sha256).digest()).decode()
                if message.get("monitorId") != qr["monitorId"]:
                    raise ClientError(f"PAIR_ACCEPTED for another monitor: {message}")
                if not hmac.compare_digest(str(message.get("confirmTag", "")), expected):
                    raise ClientError("PAIR_ACCEPTED carries a wrong confirmTag")
                peer.emit({"event": "paired", "monitorId": message["monitorId"], "listenerId": identity.device_id})
                return
            if kind in ("PAIR_REJECTED", "ERROR"):
                raise ClientError(f"pairing refused: {message}")
            log("ignored before pairing:", kind)

    def make_peer_connection(self):
        # Host candidates only (§9); --stun configures a STUN server on purpose (the privacy capture's control run).
        servers = [RTCIceServer(urls=[self.args.stun])] if self.args.stun else []
        pc = RTCPeerConnection(RTCConfiguration(iceServers=servers))

        @pc.on("connectionstatechange")
        def on_state() -> None:
            log("connectionState", pc.connectionState)
            if pc.connectionState == "failed":
                self.failure = "WebRTC connection failed"
                self.decoded.set()

        @pc.on("track")
        def on_track(track) -> None:
            log("track", track.kind)
            if track.kind == "audio":
                asyncio.ensure_future(self.consume(track))

        return pc

    async def consume(self, track) -> None:
        while True:
            try:
                frame = await track.recv()
            except Exception as error:  # MediaStreamError when the track ends
                if self.first_frame is None:
                    self.failure = f"audio track ended before any frame: {error!r}"
                log("track ended:", repr(error))
                break
            now = time.monotonic()
            if self.first_frame is None:
                self.first_frame = now
                peer.emit({"event": "first_frame", "ms": round(1000 * (now - START), 1)})
            self.frames += 1
            self.samples += frame.samples
            self.rates.add(frame.sample_rate)
            if now - self.first_frame >= self.args.seconds:
                break
        self.decoded.set()

    async def answer(self, sdp: str) -> None:

        self.pc = self.make_peer_connection()
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="offer"))
        await self.pc.setLocalDescription(await self.pc.createAnswer())  # aiortc gathers here
        lines = self.pc.localDescription.sdp.split("\r\n")
        candidates = [line[2:] for line in lines if line.startswith("a=candidate:")]
        answer = "\r\n".join(
            line for line in lines if not line.startswith("a=candidate:") and line != "a=end-of-candidates")
        # The codec that the answer negotiated for audio: the first payload type of the m=audio line.
        media = next((line for line in lines if line.startswith("m=audio ")), "")
        pts = media.split()[3:4]
        for line in lines:
            if pts and line.startswith(f"a=rtpmap:{pts[0]} "):
                self.codec = line.split()[1].split("/")[0].lower()
        mid = next((line[6:] for line in lines if line.startswith("a=mid:")), "0")
        self.protocol.send_message({"type": "WEBRTC_ANSWER", "sessionId": self.session_id, "sdp": answer})
        peer.emit({"event": "answer", "codec": self.codec, "candidates": len(candidates)})
        for candidate in candidates:
            self.protocol.send_message({"type": "WEBRTC_ICE", "sessionId": self.session_id,
                                        "candidate": {"candidate": candidate, "sdpMid": mid, "sdpMLineIndex": 0}})
        self.protocol.send_message({"type": "WEBRTC_ICE", "sessionId": self.session_id,
                                    "candidate": {"candidate": "", "sdpMid": mid, "sdpMLineIndex": 0}})

    async def add_candidate(self, init: dict) -> None:

        text = init.get("candidate", "")
        if not text:
            await self.pc.addIceCandidate(None)
            log("remote end of candidates after", self.remote_candidates)
            return
        candidate = candidate_from_sdp(text.split(":", 1)[1] if text.startswith("candidate:") else text)
        if candidate.protocol.lower() != "udp":
            return
        candidate.sdpMid = init.get("sdpMid")
        candidate.sdpMLineIndex = init.get("sdpMLineIndex")
        self.remote_candidates += 1
        await self.pc.addIceCandidate(candidate)

    async def signaling(self) -> None:
        """Handles the monitor's messages for the stream until the audio is decoded."""
        while True:
            message = await self.next_message()
            kind = message.get("type")
            sid = message.get("sessionId")
            if kind == "START_STREAM_RESPONSE" and sid == self.session_id:
                if not message.get("accepted"):
                    raise ClientError(f"stream refused: {message.get('reason')}")
                peer.emit({"event": "stream_accepted", "sessionId": sid})
            elif kind == "WEBRTC_OFFER" and sid == self.session_id:
                if self.pc is not None:
                    raise ClientError("a second WEBRTC_OFFER for the same stream")
                peer.emit({"event": "offer", "opus": "opus/48000" in message["sdp"].lower()})
                await self.answer(message["sdp"])
            elif kind == "WEBRTC_ICE" and sid == self.session_id:
                if self.pc is None:
                    raise ClientError("WEBRTC_ICE before WEBRTC_OFFER")
                await self.add_candidate(message.get("candidate") or {})
            elif kind == "END_STREAM" and sid == self.session_id:
                raise ClientError(f"the monitor ended the stream: {message}")
            elif kind == "ERROR":
                raise ClientError(f"monitor error: {message}")
            elif kind == "PING":
                self.protocol.send_message({"type": "PONG", "timestamp": message.get("timestamp")})
            elif kind == "WEBRTC_OFFER" or (kind == "NOISE_EVENT" and message.get("autoStreamSessionId")):
                # An automatic stream we did not ask for: decline it.
                other = sid or message.get("autoStreamSessionId")
                log("declining automatic stream", other)
                self.protocol.send_message({"type": "END_STREAM", "sessionId": other})
            else:
                log("ignored:", kind)

    async def stream(self) -> None:
        self.protocol.send_message({"type": "START_STREAM_REQUEST", "sessionId": self.session_id,
                                    "mediaType": "audio"})
        task = asyncio.ensure_future(self.signaling())
        waiter = asyncio.ensure_future(self.decoded.wait())
        try:
            done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                task.result()  # raises the signaling error
                raise ClientError("signaling ended before the audio was decoded")
        finally:
            task.cancel()
            waiter.cancel()
        if self.failure:
            raise ClientError(self.failure)
        seconds = round(time.monotonic() - self.first_frame, 3) if self.first_frame else 0.0
        peer.emit({"event": "decoded", "samples": self.samples, "frames": self.frames, "seconds": seconds,
                   "sampleRate": max(self.rates) if self.rates else 0, "sampleRates": sorted(self.rates),
                   "codec": self.codec})
        self.protocol.send_message({"type": "END_STREAM", "sessionId": self.session_id})
        await self.protocol.flush()
        peer.emit({"event": "ended", "sessionId": self.session_id})

    async def close(self) -> None:
        if self.pc is not None:
            await self.pc.close()


async def run(args: argparse.Namespace, qr: dict) -> int:
    identity = peer.generate_identity(str(uuid.uuid4()))
    settings = peer.ClientSettings(host=args.host, port=args.port, identity=identity,
                                   pin=peer.normalize_fingerprint(qr["monitorCertFingerprint"]), alpn=peer.ALPN)
    transport, protocol = await peer.connect_pinned(settings)
    session = Session(protocol, args)
    try:
        if not await protocol.handshake():
            return peer.report_failed_handshake(protocol)
        if not protocol.pin.checked:
            raise ClientError("handshake completed without a server certificate to pin")
        protocol.open_control_stream()
        await session.pair(qr, identity)
        await session.stream()
        return peer.EXIT_OK
    finally:
        await session.close()
        if not protocol.is_ended:
            protocol.close(error_code=peer.QuicErrorCode.NO_ERROR, reason_phrase="done")
            await asyncio.sleep(0.05)  # let the CONNECTION_CLOSE leave
        transport.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=peer.port_number, required=True)
    parser.add_argument("--qr", required=True, help="the QR code's JSON text")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long to decode after the first frame")
    parser.add_argument("--timeout", type=float, default=40.0, help="give up this many seconds after ready")
    parser.add_argument("--ice-address", default=None,
                        help="the only host address aiortc gathers on (default: --host)")
    parser.add_argument("--stun", default=None, metavar="stun:HOST:PORT",
                        help="a STUN server for aiortc's ICE (only to prove that a capture catches one)")
    args = parser.parse_args()
    # aioice skips 127.0.0.1 and has no option for it: gather on one given address only.
    address = args.ice_address or args.host
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [address]
    try:
        qr = json.loads(args.qr)
        for field in ("monitorId", "monitorCertFingerprint", "pairingToken"):
            if not isinstance(qr.get(field), str):
                raise ClientError(f"the QR payload has no {field}")
        peer.emit({"event": "ready"})
        return asyncio.run(asyncio.wait_for(run(args, qr), args.timeout))
    except (asyncio.TimeoutError, TimeoutError):
        peer.emit({"event": "error", "message": f"timed out after {args.timeout} s"})
    except (ClientError, ValueError, KeyError, OSError, argparse.ArgumentTypeError) as exc:
        peer.emit({"event": "error", "message": str(exc)})
    except Exception as exc:  # anything unexpected still ends in one error line
        peer.emit({"event": "error", "message": f"{type(exc).__name__}: {exc}"})
    return peer.EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
