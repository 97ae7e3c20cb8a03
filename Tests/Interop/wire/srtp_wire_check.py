#!/usr/bin/env python3
"""An independent on-the-wire check that a WebRTC audio stream is encrypted (DTLS-SRTP, no plain RTP).

    srtp_wire_check.py --interface IF [--exclude-port PORT ...] [--duration SECONDS] [--save CAPTURE.json]
    srtp_wire_check.py --replay CAPTURE.json [--exclude-port PORT ...]

Python 3.11 standard library only: no scapy, no tcpdump, no libpcap, and no code shared with the implementation
under test. It knows no keys; everything below is judged from the bytes on the wire.

Capture mode opens an AF_PACKET raw socket on interface IF (run it inside the network namespace of one host, e.g.
`ip netns exec NS python3 srtp_wire_check.py --interface IF`; needs CAP_NET_RAW), prints
`{"event": "capturing", ...}` once the socket is bound, and captures every UDP datagram (IPv4 and IPv6, both
directions) until SIGTERM/SIGINT or --duration seconds. Replay mode reads packets from a JSON file instead (a test
generates synthetic captures with it; --save writes a real capture in the same form):

    {"packets": [{"src": "10.0.0.1:5000", "dst": "10.0.0.2:6000", "hex": "80ef..."}, ...]}   (in capture order)

Either way the script then prints ONE JSON line, `{"event": "summary", ...}`, and exits 0 (2 when it cannot
capture at all).

Classification
--------------
Datagrams from or to an --exclude-port (the QUIC control channel) and mDNS (5353) are left out. QUIC has to be
filtered by port, not by content: short headers have first bytes 64-127 and long headers >= 192, and a peer that
greases the fixed bit (RFC 9287; ngtcp2 does, e.g. long headers starting 0x8a) puts QUIC in 128-191 too. Every other
datagram is grouped by its 5-tuple (direction-agnostic) and classified by its first byte, RFC 7983 §7:
0-3 STUN, 20-63 DTLS, 128-191 RTP/RTCP (RTCP when the second byte, the packet type, is 192-223: RFC 5761 §4),
anything else "other". The media flow is the 5-tuple carrying the most RTP packets; the report is about it, and
every other flow's counts are listed too.

Parsed in the clear: DTLS record headers (content type, version — 0xfefd DTLS 1.2, 0xfeff DTLS 1.0, which
OpenSSL uses for the ClientHello's records —, epoch) and, in epoch 0, the ClientHello/ServerHello `use_srtp`
extension (RFC 5764 §4.1.1; fragmented hellos are reassembled), which names the SRTP protection profile the two
peers agreed on; the RTP header (RFC 3550 §5.1, with CSRCs and header extension: SRTP leaves it in the clear);
the first 8 bytes of an RTCP compound packet (SRTCP leaves them in the clear, RFC 3711 §3.4). Nothing else of an
SRTCP packet can be read: the declared lengths of the compound's later packets are ciphertext, so the check
cannot simply add them up.

Criteria for "encrypted": true (every one must hold; `failures` lists the ones that did not)
------------------------------------------------------------------------------------------------
(a) Keys before media. On the media 5-tuple, before its first RTP/RTCP packet: DTLS handshake records (content
    type 22) from both ends, the ServerHello selecting an SRTP profile that encrypts (AES-CM or AEAD-GCM, not a
    NULL-cipher profile); and records of epoch >= 1 (Finished) from both ends, i.e. a completed handshake from
    which the SRTP keys are exported (RFC 5764 §4.2) — the last Finished may trail the first SRTP packet on the
    wire (GStreamer flushes the final flight on its own task). Plain RTP needs none of this.
(b) RTCP is SRTCP with encryption on. An SRTCP packet is the compound RTCP packet (only its first 8 bytes in the
    clear) followed by the 32-bit word E||SRTCP index and the authentication tag (RFC 3711 §3.4: ciphertext,
    E||index, tag of 10 bytes for the AES-CM profiles, RFC 5764 §4.1.2; RFC 7714 §17: ciphertext, 16-byte tag,
    E||index for AEAD; no MKI, which WebRTC never uses). So for every RTCP packet: the walk of plain compound headers (version 2, packet type
    192-223, declared lengths) must NOT account for exactly the whole datagram — a plain compound packet does
    that, by definition —; the first packet's declared length must leave room for E||index plus the tag; and the
    word at the profile's E||index position must have E = 1 (encrypted) and a small index (< 2^16: the counter
    starts near 0 — libsrtp's at 1 — and the session is seconds old), strictly increasing per sender SSRC. A
    random word passes with probability 2^-16, and a plain packet fails the walk condition whatever its bytes
    there are. With no profile known both layouts are tried.
(c) RTP payloads are ciphertext, not Opus. What can be judged without keys:
    - first payload byte diversity: plain Opus starts with its TOC byte (RFC 6716 §3.1: config, stereo flag,
      frame-count code). Our sender (opusenc, frame-size 20 ms, mono) produces only the 9 configs of 20 ms frames
      (SILK NB/MB/WB, hybrid SWB/FB, CELT NB/WB/SWB/FB), s = 0 and code 0 — 9 possible bytes, at most 36 with
      any frame-count code, at most 128 for any mono Opus at all. SRTP encrypts the payload with a keystream
      (AES-CM/GCM), so the first byte is uniform: 200 packets show about 139 distinct values (expected
      256·(1-(255/256)^200)); fewer than 64 is essentially impossible. Required: at least --min-rtp packets
      (default 200) and at least --min-distinct (default 64) distinct first bytes.
    - Opus TOC fraction: the share of payloads whose first byte is one of those 9 TOC bytes: 1.0 for our plain
      Opus, 9/256 ≈ 0.035 for ciphertext. Required: < 0.5.
    - byte entropy of all payload bytes (Shannon, bits/byte), reported with the entropy of the first bytes;
      required >= 7.5 over >= 2048 bytes (ciphertext and tags are ~8; silence, PCM or text are far lower; note
      compressed Opus is high too, which is why this is necessary but not sufficient).
    - room for the authentication tag: every payload is at least 1 + the profile's SRTP tag length (10 bytes for
      SRTP_AES128_CM_HMAC_SHA1_80, 4 for _32, 16 for AEAD). Without the keys the tag itself cannot be verified;
      this is only the necessary condition (with DTX a plain Opus packet can be 1 byte).
(d) No RTP/RTCP-looking packets on any other 5-tuple (a second, unencrypted media path would be missed otherwise).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import socket
import struct
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

MDNS_PORT = 5353
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_STATISTICS = 6

# RFC 5764 §4.1.2 and RFC 7714 §14.2: profile -> (name, SRTP tag bytes, SRTCP tag bytes, AEAD, encrypts)
SRTP_PROFILES = {
    0x0001: ("SRTP_AES128_CM_HMAC_SHA1_80", 10, 10, False, True),
    0x0002: ("SRTP_AES128_CM_HMAC_SHA1_32", 4, 10, False, True),
    0x0005: ("SRTP_NULL_HMAC_SHA1_80", 10, 10, False, False),
    0x0006: ("SRTP_NULL_HMAC_SHA1_32", 4, 10, False, False),
    0x0007: ("SRTP_AEAD_AES_128_GCM", 16, 16, True, True),
    0x0008: ("SRTP_AEAD_AES_256_GCM", 16, 16, True, True),
}

# The Opus TOC bytes (RFC 6716 §3.1) of one 20 ms mono frame: configs 1, 5, 9 (SILK), 13, 15 (hybrid),
# 19, 23, 27, 31 (CELT), s = 0, c = 0.
OPUS_20MS_MONO_TOC = frozenset(config << 3 for config in (1, 5, 9, 13, 15, 19, 23, 27, 31))

HANDSHAKE_TYPES = {
    0: "hello_request", 1: "client_hello", 2: "server_hello", 3: "hello_verify_request", 4: "new_session_ticket",
    11: "certificate", 12: "server_key_exchange", 13: "certificate_request", 14: "server_hello_done",
    15: "certificate_verify", 16: "client_key_exchange", 20: "finished",
}


def u16(data: bytes, at: int) -> int:
    return (data[at] << 8) | data[at + 1]


def u32(data: bytes, at: int) -> int:
    return struct.unpack_from("!I", data, at)[0]


def entropy(counts: Counter) -> float:
    total = sum(counts.values())
    if total == 0:
        return 0.0
    return -sum(n / total * math.log2(n / total) for n in counts.values() if n)


def classify(first: int, second: int | None) -> str:
    """RFC 7983 §7 (with RFC 5761 §4 for RTP vs RTCP)."""
    if first <= 3:
        return "stun"
    if 20 <= first <= 63:
        return "dtls"
    if 128 <= first <= 191:
        return "rtcp" if second is not None and 192 <= second <= 223 else "rtp"
    return "other"


# ----------------------------------------------------------------------------------------------------------------
# DTLS


def parse_use_srtp(extensions: bytes) -> list[int] | None:
    """The protection profiles of a use_srtp extension (type 14) in a hello's extension block, or None."""
    at = 0
    while at + 4 <= len(extensions):
        kind, size = u16(extensions, at), u16(extensions, at + 2)
        body = extensions[at + 4:at + 4 + size]
        at += 4 + size
        if kind == 14 and len(body) >= 2:
            count = u16(body, 0)
            return [u16(body, 2 + 2 * i) for i in range(count // 2) if 2 + 2 * i + 2 <= len(body)]
    return None


def parse_hello(kind: int, body: bytes) -> list[int] | None:
    """use_srtp profiles of a complete ClientHello (1) or ServerHello (2) body (DTLS 1.0/1.2 layout)."""
    try:
        at = 2 + 32  # version, random
        at += 1 + body[at]  # session id
        if kind == 1:
            at += 1 + body[at]  # cookie
            at += 2 + u16(body, at)  # cipher suites
            at += 1 + body[at]  # compression methods
        else:
            at += 2 + 1  # cipher suite, compression method
        if at + 2 > len(body):
            return None
        return parse_use_srtp(body[at + 2:at + 2 + u16(body, at)])
    except IndexError:
        return None


@dataclass
class HandshakeFragment:
    kind: int  # msg_type
    total: int  # length of the whole message
    sequence: int  # message_seq
    offset: int  # fragment_offset
    body: bytes


@dataclass
class DTLSRecord:
    content_type: int
    version: int
    epoch: int
    fragments: list[HandshakeFragment]  # of an epoch-0 handshake record (later epochs are encrypted)


def parse_dtls(data: bytes) -> list[DTLSRecord]:
    """The records of a DTLS datagram (RFC 6347 §4.1; several records may share a datagram)."""
    records = []
    at = 0
    while at + 13 <= len(data):
        content_type, version, epoch, length = data[at], u16(data, at + 1), u16(data, at + 3), u16(data, at + 11)
        fragment = data[at + 13:at + 13 + length]
        at += 13 + length
        record = DTLSRecord(content_type, version, epoch, [])
        # Handshake message fragments (RFC 6347 §4.2.2: 12-byte header); several may share a record.
        inner = 0
        while content_type == 22 and epoch == 0 and inner + 12 <= len(fragment):
            size = int.from_bytes(fragment[inner + 9:inner + 12], "big")
            record.fragments.append(HandshakeFragment(
                kind=fragment[inner], total=int.from_bytes(fragment[inner + 1:inner + 4], "big"),
                sequence=u16(fragment, inner + 4), offset=int.from_bytes(fragment[inner + 6:inner + 9], "big"),
                body=fragment[inner + 12:inner + 12 + size]))
            inner += 12 + size
        records.append(record)
    return records


class HelloReassembler:
    """Puts fragmented ClientHello/ServerHello messages back together (a ClientHello with many cipher suites
    is often split over two datagrams) and returns their use_srtp profiles once complete."""

    def __init__(self) -> None:
        self.pending: dict = {}
        self.done: set = set()

    def add(self, sender: tuple[str, int], fragment: HandshakeFragment) -> list[int] | None:
        key = (sender, fragment.kind, fragment.sequence)
        if fragment.kind not in (1, 2) or key in self.done or fragment.total > 1 << 16:
            return None
        body, covered = self.pending.setdefault(key, (bytearray(fragment.total), bytearray(fragment.total)))
        end = min(fragment.total, fragment.offset + len(fragment.body))
        body[fragment.offset:end] = fragment.body[:end - fragment.offset]
        covered[fragment.offset:end] = b"\x01" * (end - fragment.offset)
        if 0 in covered:
            return None
        self.done.add(key)
        del self.pending[key]
        return parse_hello(fragment.kind, bytes(body)) or []


# ----------------------------------------------------------------------------------------------------------------
# RTP / RTCP


def rtp_payload(data: bytes) -> tuple[int, int, bytes] | None:
    """(payload type, SSRC, payload) of an RTP packet, or None when the header does not fit."""
    if len(data) < 12 or data[0] >> 6 != 2:
        return None
    length = 12 + 4 * (data[0] & 0x0F)
    if data[0] & 0x10:  # header extension
        if length + 4 > len(data):
            return None
        length += 4 + 4 * u16(data, length + 2)
    if length > len(data):
        return None
    return data[1] & 0x7F, u32(data, 8), data[length:]


def plain_compound_length(data: bytes) -> int:
    """How many bytes a walk of plain RTCP headers (version 2, type 192-223, declared length) accounts for."""
    at = 0
    while at + 4 <= len(data) and data[at] >> 6 == 2 and 192 <= data[at + 1] <= 223:
        size = 4 * (u16(data, at + 2) + 1)
        if at + size > len(data):
            break
        at += size
    return at


@dataclass
class RTCPCheck:
    plain: bool  # the whole datagram is a plain compound RTCP packet
    ssrc: int | None
    encrypted_flag: bool | None  # E of the SRTCP trailer found, None if no trailer fits
    index: int | None
    trailer_bytes: int  # datagram length minus the first packet's declared length


def check_rtcp(data: bytes, profile: int | None) -> RTCPCheck:
    n = len(data)
    plain = plain_compound_length(data) == n
    ssrc = u32(data, 4) if n >= 8 else None
    first = 4 * (u16(data, 2) + 1) if n >= 4 else n
    layouts = []  # (position of E||index, bytes after the compound that the trailer needs)
    known = SRTP_PROFILES.get(profile) if profile is not None else None
    if known is None or not known[3]:
        tag = known[2] if known else 10
        layouts.append((n - tag - 4, tag + 4))
    if known is None or known[3]:
        layouts.append((n - 4, known[2] + 4 if known else 20))
    found = None
    for position, trailer in layouts:
        if position < 8 or first > n - trailer:
            continue
        word = u32(data, position)
        candidate = (bool(word >> 31), word & 0x7FFFFFFF)
        if candidate[0] and candidate[1] < 1 << 16:
            found = candidate
            break
        found = found or candidate
    return RTCPCheck(plain, ssrc, found[0] if found else None, found[1] if found else None, n - first)


# ----------------------------------------------------------------------------------------------------------------
# Capture


@dataclass
class Packet:
    src: tuple[str, int]
    dst: tuple[str, int]
    payload: bytes


def parse_frame(frame: bytes) -> Packet | str:
    """A UDP datagram from an Ethernet frame, or why not ("not-udp", "fragment")."""
    at = 12
    ethertype = u16(frame, at) if len(frame) >= 14 else 0
    while ethertype in (0x8100, 0x88A8) and len(frame) >= at + 6:  # VLAN tags
        at += 4
        ethertype = u16(frame, at)
    at += 2
    if ethertype == 0x0800 and len(frame) >= at + 20:
        header = (frame[at] & 0x0F) * 4
        if frame[at + 9] != 17:
            return "not-udp"
        flags_offset = u16(frame, at + 6)
        if flags_offset & 0x3FFF:  # more fragments or a non-zero offset
            return "fragment"
        total = u16(frame, at + 2)
        source, destination = socket.inet_ntop(socket.AF_INET, frame[at + 12:at + 16]), \
            socket.inet_ntop(socket.AF_INET, frame[at + 16:at + 20])
        udp = frame[at + header:at + total]
    elif ethertype == 0x86DD and len(frame) >= at + 40:
        next_header = frame[at + 6]
        source = socket.inet_ntop(socket.AF_INET6, frame[at + 8:at + 24])
        destination = socket.inet_ntop(socket.AF_INET6, frame[at + 24:at + 40])
        body = frame[at + 40:at + 40 + u16(frame, at + 4)]
        while next_header in (0, 43, 60) and len(body) >= 8:  # hop-by-hop, routing, destination options
            next_header, body = body[0], body[8 + 8 * body[1]:]
        if next_header == 44:
            return "fragment"
        if next_header != 17:
            return "not-udp"
        udp = body
    else:
        return "not-udp"
    if len(udp) < 8:
        return "not-udp"
    length = max(8, min(len(udp), u16(udp, 4)))
    return Packet((source, u16(udp, 0)), (destination, u16(udp, 2)), bytes(udp[8:length]))


def capture(interface: str, duration: float | None, stats: dict) -> list[Packet]:
    stop = []
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.append(True))
    # A parent (a test runner) may have left these blocked in the mask we inherited.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind((interface, 0))
    sock.settimeout(0.1)
    print(json.dumps({"event": "capturing", "interface": interface}), flush=True)
    started = time.monotonic()
    packets = []
    while not stop and (duration is None or time.monotonic() - started < duration):
        try:
            frame = sock.recv(65535)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        parsed = parse_frame(frame)
        if isinstance(parsed, Packet):
            packets.append(parsed)
        else:
            stats[parsed] = stats.get(parsed, 0) + 1
    try:
        _received, dropped = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        stats["kernelDrops"] = dropped
    except OSError:
        pass
    sock.close()
    stats["seconds"] = round(time.monotonic() - started, 3)
    return packets


def write_replay(path: str, packets: list[Packet]) -> None:
    document = {"packets": [{"src": endpoint_text(p.src), "dst": endpoint_text(p.dst), "hex": p.payload.hex()}
                            for p in packets]}
    with open(path, "w", encoding="utf-8") as file:
        json.dump(document, file, indent=0)


def read_replay(path: str) -> list[Packet]:
    def endpoint(text: str) -> tuple[str, int]:
        host, _, port = text.rpartition(":")
        return host.strip("[]"), int(port)

    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    return [Packet(endpoint(p["src"]), endpoint(p["dst"]), bytes.fromhex(p["hex"])) for p in document["packets"]]


# ----------------------------------------------------------------------------------------------------------------
# Analysis


def endpoint_text(endpoint: tuple[str, int]) -> str:
    host, port = endpoint
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class Flow:
    ends: tuple[tuple[str, int], tuple[str, int]]
    packets: list[tuple[int, Packet, str]] = field(default_factory=list)  # (capture position, packet, class)

    def count(self, kind: str) -> int:
        return sum(1 for _, _, k in self.packets if k == kind)


def flows_of(packets: list[Packet], exclude: set[int]) -> tuple[dict, int]:
    """The datagrams grouped by 5-tuple (direction-agnostic) and classified, and how many were left out by port."""
    flows: dict = {}
    excluded = 0
    for position, packet in enumerate(packets):
        if {packet.src[1], packet.dst[1]} & exclude:
            excluded += 1
            continue
        ends = tuple(sorted((packet.src, packet.dst)))
        data = packet.payload
        kind = classify(data[0], data[1] if len(data) > 1 else None) if data else "other"
        flows.setdefault(ends, Flow(ends)).packets.append((position, packet, kind))
    return flows, excluded


def flow_text(flow: Flow) -> str:
    return " <-> ".join(endpoint_text(e) for e in flow.ends)


def analyse(packets: list[Packet], exclude: set[int], minimum_rtp: int, minimum_distinct: int) -> dict:
    flows, excluded = flows_of(packets, exclude)
    media = max(flows.values(), key=lambda f: (f.count("rtp"), f.count("rtcp")), default=None)
    if media is not None and media.count("rtp") + media.count("rtcp") == 0:
        media = None
    failures = []
    summary: dict = {
        "udpPackets": sum(len(f.packets) for f in flows.values()) + excluded,
        "excludedPackets": excluded,
        "excludedPorts": sorted(exclude),
        "mediaFlow": flow_text(media) if media else None,
    }

    # Every other flow: counts only (d).
    others = []
    for flow in flows.values():
        if flow is media:
            continue
        counts = Counter(kind for _, _, kind in flow.packets)
        others.append({"flow": flow_text(flow), **counts})
        if counts["rtp"] or counts["rtcp"]:
            failures.append(f"RTP/RTCP-looking packets on another flow: {others[-1]}")
    summary["otherFlows"] = others

    if media is None:
        summary.update(stun=0, dtls=0, rtp=0, rtcp=0, other=0, encrypted=False,
                       failures=failures + ["no RTP on the wire at all"])
        return summary

    judged = judge_flow(media, minimum_rtp, minimum_distinct)
    summary.update(judged)
    summary["failures"] = failures + judged["failures"]
    summary["encrypted"] = not summary["failures"]
    return summary


def judge_flow(media: Flow, minimum_rtp: int, minimum_distinct: int) -> dict:
    """Criteria (a) to (c) for one flow carrying RTP/RTCP: its figures, `failures` and `encrypted`."""
    failures = []
    summary: dict = {}
    counts = Counter(kind for _, _, kind in media.packets)
    first_media = next(position for position, _, kind in media.packets if kind in ("rtp", "rtcp"))

    # (a) DTLS on the media flow.
    versions: Counter = Counter()
    content_types: Counter = Counter()
    handshake_types: list[str] = []
    offered = selected = None
    hellos = HelloReassembler()
    before = {"handshake": set(), "epoch1": set(), "selected": None}
    epoch1_anywhere: set = set()
    for position, packet, kind in media.packets:
        if kind != "dtls":
            continue
        for record in parse_dtls(packet.payload):
            versions[f"{record.version:04x}"] += 1
            content_types[record.content_type] += 1
            for fragment in record.fragments:
                name = HANDSHAKE_TYPES.get(fragment.kind, str(fragment.kind))
                if name not in handshake_types:
                    handshake_types.append(name)
                profiles = hellos.add(packet.src, fragment)
                if profiles is not None and fragment.kind == 1:
                    offered = profiles
                if profiles is not None and fragment.kind == 2:
                    selected = profiles[0] if profiles else None
                    if position < first_media:
                        before["selected"] = selected
            if record.epoch >= 1:
                epoch1_anywhere.add(packet.src)
            if position < first_media:
                if record.content_type == 22:
                    before["handshake"].add(packet.src)
                if record.epoch >= 1:
                    before["epoch1"].add(packet.src)
    profile = SRTP_PROFILES.get(selected)
    handshake_before = bool(before["handshake"])
    # The keys exist once both ends' hellos chose an encrypting profile; the Finished messages (epoch 1) of both
    # ends must be seen too, but the last one may trail the first SRTP packet on the wire: GStreamer's DTLS
    # encoder flushes the handshake's final flight on its own task while SRTP already flows through the funnel.
    complete_before = (len(before["handshake"]) == 2 and len(epoch1_anywhere) == 2
                       and before["selected"] in SRTP_PROFILES and SRTP_PROFILES[before["selected"]][4])
    summary.update({
        "stun": counts["stun"], "dtls": counts["dtls"], "rtp": counts["rtp"], "rtcp": counts["rtcp"],
        "other": counts["other"],
        "dtlsRecords": sum(content_types.values()),
        "dtlsHandshakeRecords": content_types[22],
        "dtlsRecordTypes": {str(k): v for k, v in sorted(content_types.items())},
        "dtlsVersions": dict(sorted(versions.items())),
        "dtlsVersionFefdSeen": versions["fefd"] > 0,
        "dtlsHandshakeMessages": handshake_types,
        "srtpProfilesOffered": [SRTP_PROFILES.get(p, (f"0x{p:04x}",))[0] for p in offered or []],
        "srtpProfile": profile[0] if profile else (f"0x{selected:04x}" if selected is not None else None),
        "dtlsHandshakeBeforeFirstRtp": handshake_before,
        "dtlsSrtpHandshake": bool(complete_before),
    })
    if not complete_before:
        failures.append("no DTLS-SRTP handshake (both ends' hellos and an encrypting use_srtp profile before the "
                        "first RTP/RTCP packet, epoch-1 Finished records from both ends)")

    # (b) RTCP.
    rtcp_checks = [check_rtcp(p.payload, selected) for _, p, k in media.packets if k == "rtcp"]
    indices: dict = {}
    for check in rtcp_checks:
        if check.encrypted_flag and check.index is not None and check.index < 1 << 16 and not check.plain:
            indices.setdefault(f"{check.ssrc:08x}", []).append(check.index)
    srtcp = sum(len(v) for v in indices.values())
    increasing = all(all(a < b for a, b in zip(v, v[1:])) for v in indices.values())
    summary.update({
        "rtcpPlain": sum(1 for c in rtcp_checks if c.plain),
        "srtcp": srtcp,
        "srtcpUnencrypted": sum(1 for c in rtcp_checks if not c.plain and c.encrypted_flag is False),
        "srtcpIndices": indices,
        "srtcpIndicesIncreasing": increasing,
        "rtcpTrailerBytes": sorted({c.trailer_bytes for c in rtcp_checks}),
        "rtcpAllSrtcpEncrypted": srtcp == len(rtcp_checks) and increasing,
    })
    if srtcp != len(rtcp_checks):
        failures.append(f"{len(rtcp_checks) - srtcp} of {len(rtcp_checks)} RTCP packets are not SRTCP with E=1")
    if not increasing:
        failures.append("SRTCP indices do not increase")

    # (c) RTP payloads.
    rtp = [rtp_payload(p.payload) for _, p, k in media.packets if k == "rtp"]
    malformed = sum(1 for r in rtp if r is None)
    payloads = [r[2] for r in rtp if r is not None]
    first_bytes = Counter(p[0] for p in payloads if p)
    all_bytes: Counter = Counter()
    for payload in payloads:
        all_bytes.update(payload)
    with_payload = sum(first_bytes.values())
    toc_fraction = sum(n for b, n in first_bytes.items() if b in OPUS_20MS_MONO_TOC) / with_payload if with_payload \
        else 1.0
    tag = profile[1] if profile else 4
    shortest = min((len(p) for p in payloads), default=0)
    summary.update({
        "rtpMalformed": malformed,
        "rtpSsrcs": sorted({f"{r[1]:08x}" for r in rtp if r is not None}),
        "rtpPayloadTypes": sorted({r[0] for r in rtp if r is not None}),
        "rtpDistinctFirstBytes": len(first_bytes),
        "rtpFirstByteEntropy": round(entropy(first_bytes), 3),
        "rtpOpusTocFraction": round(toc_fraction, 4),
        "rtpPayloadBytes": sum(all_bytes.values()),
        "rtpPayloadEntropy": round(entropy(all_bytes), 4),
        "rtpMinPayloadBytes": shortest,
        "rtpAuthTagBytes": tag,
        "rtpAuthTagRoom": bool(payloads) and shortest >= tag + 1,
    })
    if len(payloads) < minimum_rtp:
        failures.append(f"only {len(payloads)} RTP packets (need {minimum_rtp} to judge the payloads)")
    if len(first_bytes) < minimum_distinct:
        failures.append(f"only {len(first_bytes)} distinct first payload bytes (ciphertext: >= {minimum_distinct})")
    if toc_fraction >= 0.5:
        failures.append(f"{toc_fraction:.0%} of RTP payloads start with a 20 ms mono Opus TOC byte")
    if summary["rtpPayloadBytes"] < 2048 or summary["rtpPayloadEntropy"] < 7.5:
        failures.append(f"payload byte entropy {summary['rtpPayloadEntropy']} bits over "
                        f"{summary['rtpPayloadBytes']} bytes (ciphertext: >= 7.5 over >= 2048)")
    if not summary["rtpAuthTagRoom"]:
        failures.append(f"an RTP payload of {shortest} bytes has no room for a {tag}-byte authentication tag")
    if malformed:
        failures.append(f"{malformed} malformed RTP headers")

    summary["encrypted"] = not failures
    summary["failures"] = failures
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--interface", help="capture on this interface (AF_PACKET; needs CAP_NET_RAW)")
    source.add_argument("--replay", metavar="FILE", help="analyse the packets of a JSON capture file instead")
    parser.add_argument("--exclude-port", type=int, action="append", default=[],
                        help="leave out datagrams from or to this port (the QUIC control channel); repeatable")
    parser.add_argument("--duration", type=float, help="stop capturing after this many seconds")
    parser.add_argument("--save", metavar="FILE", help="also write the captured datagrams as a --replay file")
    parser.add_argument("--min-rtp", type=int, default=200, help="RTP packets needed to judge payloads")
    parser.add_argument("--min-distinct", type=int, default=64, help="distinct first payload bytes required")
    arguments = parser.parse_args()

    stats: dict = {}
    if arguments.interface:
        try:
            packets = capture(arguments.interface, arguments.duration, stats)
        except OSError as error:
            print(json.dumps({"event": "error", "error": f"cannot capture on {arguments.interface}: {error}"}),
                  flush=True)
            return 2
        origin = f"capture:{arguments.interface}"
        if arguments.save:
            write_replay(arguments.save, packets)
    else:
        packets = read_replay(arguments.replay)
        origin = f"replay:{arguments.replay}"
    summary = analyse(packets, set(arguments.exclude_port) | {MDNS_PORT}, arguments.min_rtp, arguments.min_distinct)
    print(json.dumps({"event": "summary", "source": origin, "capture": stats, **summary}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
