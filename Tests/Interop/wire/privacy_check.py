#!/usr/bin/env python3
"""Judges packet captures of a whole CribCall session: did anything leave the LAN?

    privacy_check.py --lan 10.78.0.0/24 [--control-port PORT ...] [--min-media-flows N] [--min-rtp N]
                     CAPTURE.pcapng [CAPTURE.pcapng ...]

The captures are dumpcap's (pcapng, every interface of one host each, named in the file); Wireshark's own
dissector, `tshark -n` (Debian's `tshark`), reads them: this script has no packet parser of its own for the
link, network and transport layers. Each file is one host's view, its name (without .pcapng) the host's label.
Prints ONE JSON line, {"event": "summary", "ok": …, "failures": […], …}, and exits 0 when every rule holds, 1 when
one does not (the failures say which packets broke which rule), 2 when the captures cannot be read.

Rules (every one must hold)
---------------------------
1. Addresses. Every IPv4 and IPv6 address in every packet (inner headers of ICMP errors included) is one of:
   - in the LAN (--lan, its broadcast address included);
   - the mDNS group, 224.0.0.251 or ff02::fb;
   - link-local: 224.0.0.0/24 (RFC 5771's Local Network Control Block, e.g. IGMP reports to 224.0.0.22),
     ff02::/16 and fe80::/10 (RFC 4291: never forwarded by a router), and :: as the source of duplicate address
     detection — the kernel's own neighbour discovery and group reports;
   - loopback (127.0.0.0/8, ::1) on a loopback interface only.
   Anything else — a DNS query, a public address, a default route used, 239.255.255.250 (SSDP, site-scoped) — is
   a failure, reported per source, destination and protocol with the first frame number. Frames that are not IP
   must be ARP.
2. No STUN server and no TURN. A STUN message is a UDP payload with the RFC 8489 header (first two bits 0, magic
   cookie 0x2112A442; tshark's `stun.type` is reported beside it). Allowed: ICE connectivity checks — Binding
   requests carrying USERNAME, MESSAGE-INTEGRITY and PRIORITY (RFC 8445 §7.1.1: short-term credentials only the
   two peers have) — their responses, and Binding indications (keepalives). A Binding request without them is a
   query to a STUN server (a failure wherever it goes); any other method (Allocate, Refresh, CreatePermission,
   ChannelBind, Send, Data: TURN) is a failure.
3. Media is DTLS-SRTP. Per host and interface, UDP datagrams are grouped by 5-tuple (the --control-port QUIC
   channel, mDNS and DNS left out) and classified by RFC 7983; every flow carrying anything RTP/RTCP-shaped is judged by
   srtp_wire_check.py's criteria (a)-(c) without keys: a DTLS handshake selecting an encrypting SRTP profile before
   the media, SRTCP with E=1 and increasing indices, payloads that look like ciphertext. At least --min-media-flows
   such flows must be seen (so a session whose stream never ran cannot pass by having no media). A flow ICE moved a
   stream to mid-way (no handshake of its own, the same SSRCs as the latest earlier encrypted flow between the same
   two hosts) is judged together with that flow ("continues").
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import srtp_wire_check as wire  # noqa: E402

MAGIC_COOKIE = 0x2112A442
USERNAME, MESSAGE_INTEGRITY, PRIORITY = 0x0006, 0x0008, 0x0024
STUN_METHODS = {0x001: "Binding", 0x003: "Allocate", 0x004: "Refresh", 0x006: "Send", 0x007: "Data",
                0x008: "CreatePermission", 0x009: "ChannelBind"}
STUN_CLASSES = {0: "request", 1: "indication", 2: "success response", 3: "error response"}
MDNS = {ipaddress.ip_address("224.0.0.251"), ipaddress.ip_address("ff02::fb")}
LINK_LOCAL = [ipaddress.ip_network(n) for n in ("224.0.0.0/24", "ff02::/16", "fe80::/10")]
UNSPECIFIED_V6 = ipaddress.ip_address("::")
ETHERTYPE_IPV4, ETHERTYPE_ARP, ETHERTYPE_IPV6 = 0x0800, 0x0806, 0x86DD
DNS_PORT = 53

FIELDS = ["frame.number", "frame.interface_name", "eth.type", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
          "udp.srcport", "udp.dstport", "tcp.srcport", "tcp.dstport", "stun.type",
          "udp.payload", "frame.protocols", "dns.qry.name", "eth.src", "eth.dst"]


class CaptureError(Exception):
    pass


def read_capture(path: str) -> list[dict]:
    """The frames of one capture file, as tshark dissects them (one dict of field -> [values] per frame)."""
    command = ["tshark", "-n", "-r", path, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
               "-E", "aggregator=/s"]
    for name in FIELDS:
        command += ["-e", name]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                                env={**os.environ, "LC_ALL": "C"})
    except FileNotFoundError:
        raise CaptureError("tshark is not installed: apt-get install tshark (make test installs it)")
    if result.returncode != 0:
        raise CaptureError(f"tshark could not read {path}: {result.stderr.strip()}")
    frames = []
    for line in result.stdout.splitlines():
        values = line.split("\t")
        values += [""] * (len(FIELDS) - len(values))
        frames.append({name: [v for v in value.split(" ") if v] for name, value in zip(FIELDS, values)})
    return frames


def address_class(address: str, interface: str, lans: list) -> str:
    ip = ipaddress.ip_address(address.split("%")[0])
    if ip in MDNS:
        return "mdns"
    if any(ip in network for network in LINK_LOCAL) or ip == UNSPECIFIED_V6:
        return "linkLocal"
    if ip.is_loopback:
        return "loopback" if interface == "lo" else "loopbackOffLoopback"
    return "lan" if any(ip in network for network in lans) else "outside"


def parse_stun(payload: bytes) -> tuple[int, list[int]] | None:
    """(message type, attribute types) when `payload` is a STUN message (RFC 8489 §5, §14), else None."""
    if len(payload) < 20 or payload[0] & 0xC0 or wire.u32(payload, 4) != MAGIC_COOKIE:
        return None
    length = wire.u16(payload, 2)
    attributes = []
    at = 20
    while at + 4 <= min(len(payload), 20 + length):
        kind, size = wire.u16(payload, at), wire.u16(payload, at + 2)
        attributes.append(kind)
        at += 4 + (size + 3) // 4 * 4
    return wire.u16(payload, 0), attributes


def stun_name(kind: int) -> str:
    method = (kind & 0x000F) | ((kind & 0x00E0) >> 1) | ((kind & 0x3E00) >> 2)
    klass = ((kind & 0x0010) >> 4) | ((kind & 0x0100) >> 7)
    return f"{STUN_METHODS.get(method, f'method 0x{method:03x}')} {STUN_CLASSES[klass]}"


def as_continuation(flow, judged: dict, earlier: list, hosts_of: dict, interface: str, min_rtp: int):
    """ICE may move a stream to another candidate pair mid-way (a new 5-tuple, the same DTLS association and SSRCs):
    such a flow has no handshake of its own and may be too short to judge. It passes as the continuation of the
    latest earlier encrypted flow between the same two hosts (MAC addresses) if every SSRC it carries was there, and
    the two judged as one flow pass. Returns the judgement to keep and the flow it continues (or None)."""
    hosts = hosts_of.get((interface, flow.ends))
    ssrcs = set(judged.get("rtpSsrcs") or [])
    if not all(short_flow_excuse(failure, judged) for failure in judged["failures"]):
        return judged, None  # plain RTCP, Opus TOC bytes, no room for a tag, …: not excused by being a continuation
    for previous, verdict in reversed(earlier):
        if not verdict["encrypted"] or hosts_of.get((interface, previous.ends)) != hosts:
            continue
        if not ssrcs or not ssrcs <= set(verdict.get("rtpSsrcs") or []):
            return judged, None
        merged = wire.Flow(previous.ends, sorted(previous.packets + flow.packets, key=lambda p: p[0]))
        together = wire.judge_flow(merged, min_rtp, 64)
        return (together, wire.flow_text(previous)) if together["encrypted"] else (judged, None)
    return judged, None


def short_flow_excuse(failure: str, judged: dict) -> bool:
    """Whether `failure` is one a continuation may have: no handshake of its own, too few packets to judge, and
    the payload statistics that need many packets — as long as what there is looks like ciphertext (at least 60 %
    of the distinct first bytes uniform random bytes would give)."""
    if failure.startswith("no DTLS-SRTP handshake") or ("RTP packets (need" in failure):
        return True
    if "distinct first payload bytes" in failure:
        count = judged.get("rtp", 0)
        expected = 256 * (1 - (255 / 256) ** count)
        return judged.get("rtpDistinctFirstBytes", 0) >= 0.6 * expected
    if failure.startswith("payload byte entropy"):
        return judged.get("rtpPayloadBytes", 0) < 2048
    return False


def first(frame: dict, name: str) -> str | None:
    values = frame.get(name) or []
    return values[0] if values else None


def check(paths: list[str], lans: list, control_ports: set[int], min_media_flows: int, min_rtp: int) -> dict:
    failures: list[str] = []
    addresses: Counter = Counter()
    outside: dict = {}
    ethertypes: Counter = Counter()
    stun: Counter = Counter()
    stun_failures: dict = {}
    tshark_stun_disagreements = 0
    captures: dict = {}
    media: list[dict] = []
    for path in paths:
        host = Path(path).name.removesuffix(".pcapng")
        frames = read_capture(path)
        per_interface: dict[str, list[wire.Packet]] = {}
        hosts_of: dict = {}  # (interface, flow ends) -> the two hosts' MAC addresses
        interfaces: Counter = Counter()
        for frame in frames:
            number = first(frame, "frame.number")
            interface = first(frame, "frame.interface_name") or "?"
            interfaces[interface] += 1
            ethertype = int(first(frame, "eth.type") or "0", 16)
            ethertypes[f"0x{ethertype:04x}"] += 1
            if ethertype not in (ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ARP):
                key = ("non-IP", f"ethertype 0x{ethertype:04x}", interface)
                outside.setdefault(key, {"frames": 0, "first": f"{host} #{number}"})["frames"] += 1
                continue
            if ethertype == ETHERTYPE_ARP:
                continue
            sources = frame["ip.src"] + frame["ipv6.src"]
            destinations = frame["ip.dst"] + frame["ipv6.dst"]
            protocol = frame["frame.protocols"][0].split(":")[2:4] if frame["frame.protocols"] else []
            ports = (first(frame, "udp.dstport") or first(frame, "tcp.dstport") or "")
            for address in sources + destinations:
                kind = address_class(address, interface, lans)
                addresses[kind] += 1
                if kind in ("outside", "loopbackOffLoopback"):
                    src, dst = (sources or ["?"])[0], (destinations or ["?"])[0]
                    what = (protocol[1] if len(protocol) > 1 else protocol[0] if protocol else "ip").upper()
                    key = (src, dst, what + (f" to port {ports}" if ports else ""))
                    outside.setdefault(key, {"frames": 0, "first": f"{host} #{number} on {interface}"})
                    outside[key]["frames"] += 1
                    outside[key].setdefault("names", set()).update(frame["dns.qry.name"])
                    break
            payload_hex = first(frame, "udp.payload")
            # UDP right after the IP header: an ICMP error's quoted datagram is not one.
            if protocol[1:2] != ["udp"] or first(frame, "udp.srcport") is None:
                continue
            payload = bytes.fromhex(payload_hex.replace(":", "")) if payload_hex else b""
            src = (sources[0], int(first(frame, "udp.srcport")))
            dst = (destinations[0], int(first(frame, "udp.dstport")))
            per_interface.setdefault(interface, []).append(wire.Packet(src, dst, payload))
            hosts_of.setdefault((interface, tuple(sorted((src, dst)))),
                                frozenset(frame["eth.src"][:1] + frame["eth.dst"][:1]))
            if {src[1], dst[1]} & (control_ports | {wire.MDNS_PORT}):
                continue
            message = parse_stun(payload)
            if message is None:
                continue
            kind, attributes = message
            tshark_type = first(frame, "stun.type")
            if tshark_type is not None and int(tshark_type, 16) != kind:
                tshark_stun_disagreements += 1
            name = stun_name(kind)
            stun[name] += 1
            method = (kind & 0x000F) | ((kind & 0x00E0) >> 1) | ((kind & 0x3E00) >> 2)
            ice_check = {USERNAME, MESSAGE_INTEGRITY, PRIORITY} <= set(attributes)
            if method == 0x001 and name.endswith("request") and not ice_check:
                problem = "a STUN Binding request without ICE credentials (a query to a STUN server)"
            elif method != 0x001:
                problem = f"TURN: a STUN {name}"
            else:
                if name.endswith("request"):
                    stun["iceChecks"] += 1
                continue
            key = (problem, f"{wire.endpoint_text(src)} -> {wire.endpoint_text(dst)}")
            stun_failures.setdefault(key, {"frames": 0, "first": f"{host} #{number} on {interface}"})
            stun_failures[key]["frames"] += 1

        captures[host] = {"frames": len(frames), "interfaces": dict(sorted(interfaces.items()))}
        for interface, packets in sorted(per_interface.items()):
            # DNS is judged by rule 1 (its transaction id can look like an RTP header), never as media.
            flows, _ = wire.flows_of(packets, control_ports | {wire.MDNS_PORT, DNS_PORT})
            judged_flows: list = []  # (flow, judgement), in the order the flows began
            for flow in sorted(flows.values(), key=lambda f: f.packets[0][0]):
                if flow.count("rtp") + flow.count("rtcp") == 0:
                    continue
                judged = wire.judge_flow(flow, min_rtp, 64)
                continued = None
                if not judged["encrypted"]:
                    judged, continued = as_continuation(flow, judged, judged_flows, hosts_of, interface, min_rtp)
                judged_flows.append((flow, judged))
                media.append({
                    "host": host, "interface": interface, "flow": wire.flow_text(flow), "continues": continued,
                    "encrypted": judged["encrypted"], "rtp": judged["rtp"], "rtcp": judged["rtcp"],
                    "srtcp": judged.get("srtcp"), "srtpProfile": judged.get("srtpProfile"),
                    "rtpPayloadTypes": judged.get("rtpPayloadTypes"),
                    "rtpDistinctFirstBytes": judged.get("rtpDistinctFirstBytes"),
                    "failures": judged["failures"],
                })

    for (src, dst, what), seen in sorted(outside.items()):
        names = f", looking up {', '.join(sorted(seen['names']))}" if seen.get("names") else ""
        failures.append(f"leaves the LAN: {src} -> {dst} ({what}{names}), {seen['frames']} frame(s), "
                        f"first {seen['first']}")
    for (problem, flow), seen in sorted(stun_failures.items()):
        failures.append(f"{problem}: {flow}, {seen['frames']} message(s), first {seen['first']}")
    for flow in media:
        if flow["failures"]:
            failures.append(f"media that is not DTLS-SRTP on {flow['host']}/{flow['interface']}, {flow['flow']}: "
                            + "; ".join(flow["failures"]))
    encrypted_flows = sum(1 for flow in media if flow["encrypted"])
    if encrypted_flows < min_media_flows:
        failures.append(f"only {encrypted_flows} DTLS-SRTP media flow(s) seen (the session should show at least "
                        f"{min_media_flows}): did the streams run?")
    return {
        "event": "summary",
        "ok": not failures,
        "failures": failures,
        "captures": captures,
        "ethertypes": dict(sorted(ethertypes.items())),
        "addresses": dict(sorted(addresses.items())),
        "stun": dict(sorted(stun.items())),
        "stunTypeDisagreementsWithTshark": tshark_stun_disagreements,
        "mediaFlows": len(media),
        "encryptedMediaFlows": encrypted_flows,
        "media": media,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captures", nargs="+", help="pcapng files, one per host (dumpcap -i each interface)")
    parser.add_argument("--lan", action="append", required=True, help="the LAN's subnet (CIDR); repeatable")
    parser.add_argument("--control-port", type=int, action="append", default=[],
                        help="the QUIC control channel's port: its datagrams are not media; repeatable")
    parser.add_argument("--min-media-flows", type=int, default=0,
                        help="DTLS-SRTP media flows the session must show (per host and interface)")
    parser.add_argument("--min-rtp", type=int, default=100, help="RTP packets a media flow needs to be judged")
    arguments = parser.parse_args()
    try:
        lans = [ipaddress.ip_network(n, strict=False) for n in arguments.lan]
        summary = check(arguments.captures, lans, set(arguments.control_port), arguments.min_media_flows,
                        arguments.min_rtp)
    except (CaptureError, ValueError) as error:
        print(json.dumps({"event": "error", "error": str(error)}), flush=True)
        return 2
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
