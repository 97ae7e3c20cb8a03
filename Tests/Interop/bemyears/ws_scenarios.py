#!/usr/bin/env python3
"""Independent WebSocket client for the BeMyEars signaling protocol (BEMYEARS-PROTOCOL.md), one scenario per run.

    ws_scenarios.py --url ws://127.0.0.1:PORT/ws SCENARIO [--turn-secret S]

Scenarios: registration, presence, call_flow, decline, oversize, garbage, rate_limit, race, heartbeat,
slow_reader, framing (RFC 6455: fragments, ping/pong, closing handshake, violations and their close codes),
turn_credentials, cross_node (two nodes sharing PostgreSQL: --url and --url2), origin (pages of other
origins refused at the upgrade; the server's own, --allowed-origin and no Origin let in). Each talks to an already running bemyears-server only through its WebSocket (the
Python `websockets` library, pinned websockets==15.0.1; slow_reader also uses a raw socket that stops reading, and
framing raw frames with the bits `websockets` will not set) and
checks what the protocol promises.

Prints {"event": "ready"} once started (--timeout counts from there), then one JSON line on stdout ({"ok":
true|false, "scenario": …, "reason": …, plus measurements}); progress goes to stderr. Exit status: 0 passed, 1 a check failed, 2 the environment is not usable (websockets missing, no server).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import socket
import struct
import sys
import time
import urllib.parse

try:
    import websockets
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed
except ImportError:  # pragma: no cover - reported as an environment error
    websockets = None

START = time.monotonic()
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def log(*parts: object) -> None:
    print(f"[ws_scenarios {1000 * (time.monotonic() - START):7.0f} ms]", *parts, file=sys.stderr, flush=True)


class CheckFailed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def suffix() -> str:
    return secrets.token_hex(3)


# ----------------------------------------------------------------------------------------------------------------
# A protocol peer over `websockets`


class Peer:
    """One WebSocket session. Messages are read in order; `expect` skips nothing unless told to."""

    def __init__(self, name: str, ws) -> None:
        self.name = name
        self.ws = ws
        self.presence: list[str] | None = None  # the interpreters of the last PRESENCE read


    @classmethod
    async def open(cls, url: str, name: str = "peer") -> "Peer":
        # ping_interval=None: this client sends no WebSocket pings (they would not count as activity anyway).
        ws = await connect(url, max_size=2**22, ping_interval=None, open_timeout=10, close_timeout=5)
        return cls(name, ws)

    async def send(self, message) -> None:
        await self.ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))

    async def recv(self, timeout: float = 5.0) -> dict:
        try:
            text = await asyncio.wait_for(self.ws.recv(), timeout)
        except asyncio.TimeoutError:
            raise CheckFailed(f"{self.name}: no message within {timeout} s") from None
        except ConnectionClosed as e:
            raise CheckFailed(f"{self.name}: connection closed ({e.rcvd.code if e.rcvd else 'no close frame'}) "
                              f"while waiting for a message") from None
        message = json.loads(text)
        check(isinstance(message, dict) and isinstance(message.get("type"), str),
              f"{self.name}: server sent a message without a string type: {text[:200]}")
        if message["type"] == "PRESENCE":
            self.presence = [i["username"] for i in message["payload"]["interpreters"]]
        return message

    async def expect(self, type_: str, timeout: float = 5.0, skip: tuple[str, ...] = ()) -> dict:
        """The next message, which must have `type_` (messages whose type is in `skip` are passed over)."""
        deadline = time.monotonic() + timeout
        while True:
            m = await self.recv(max(0.05, deadline - time.monotonic()))
            if m["type"] in skip and m["type"] != type_:
                continue
            check(m["type"] == type_, f"{self.name}: expected {type_}, got {compact(m)}")
            return m

    async def expect_error(self, code: str, timeout: float = 5.0) -> dict:
        m = await self.expect("ERROR", timeout)
        check(m.get("payload", {}).get("code") == code, f"{self.name}: expected ERROR {code}, got {compact(m)}")
        check(isinstance(m["payload"].get("message"), str) and len(m["payload"]["message"]) > 10,
              f"{self.name}: ERROR {code} without a message a person can act on: {compact(m)}")
        return m

    async def silent(self, seconds: float) -> None:
        """Nothing arrives for `seconds`."""
        try:
            text = await asyncio.wait_for(self.ws.recv(), seconds)
        except asyncio.TimeoutError:
            return
        except ConnectionClosed:
            raise CheckFailed(f"{self.name}: connection closed unexpectedly") from None
        raise CheckFailed(f"{self.name}: unexpected message {text[:200]}")

    async def closed(self, timeout: float = 5.0) -> int | None:
        """Waits for the server to close; returns the close code it sent (None: no close frame)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                await asyncio.wait_for(self.ws.recv(), max(0.05, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
            except ConnectionClosed as e:
                return e.rcvd.code if e.rcvd else None
        raise CheckFailed(f"{self.name}: the server did not close the connection within {timeout} s")

    async def register(self, username: str, role: str) -> dict:
        await self.send({"type": "REGISTER", "payload": {"username": username, "role": role}})
        m = await self.expect("REGISTERED")
        p = m["payload"]
        check(p["username"] == username.lower() and p["role"] == role, f"{self.name}: REGISTERED {compact(m)}")
        check(p["heartbeatIntervalSec"] == 15 and p["presenceTtlSec"] == 20,
              f"{self.name}: REGISTERED timings are not the protocol's 15/20: {compact(m)}")
        check(isinstance(p["iceServers"], list), f"{self.name}: REGISTERED without an iceServers list")
        return m

    async def close(self) -> None:
        await self.ws.close()


def compact(m: dict) -> str:
    return json.dumps(m)[:300]


async def caller(url: str, name: str) -> tuple[Peer, list[str]]:
    """A registered caller and the interpreter list of its first PRESENCE (sent right after REGISTERED)."""
    p = await Peer.open(url, name)
    await p.register(name, "caller")
    presence = await p.expect("PRESENCE")
    return p, [i["username"] for i in presence["payload"]["interpreters"]]


async def interpreter(url: str, name: str, available: bool = True) -> Peer:
    p = await Peer.open(url, name)
    await p.register(name, "interpreter")
    if available:
        await p.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
        m = await p.expect("STATE")
        check(m["payload"]["state"] == "AVAILABLE", f"{name}: STATE after Go Online: {compact(m)}")
    return p


async def ringing_and_hidden(p: Peer, interpreter_name: str) -> dict:
    """After CALL_REQUEST: CALL_RINGING and a PRESENCE without the interpreter, in either order."""
    ringing = None
    hidden = False
    while ringing is None or not hidden:
        m = await p.recv()
        if m["type"] == "CALL_RINGING" and ringing is None:
            ringing = m
        elif m["type"] == "PRESENCE":
            hidden = interpreter_name not in [i["username"] for i in m["payload"]["interpreters"]]
        else:
            raise CheckFailed(f"{p.name}: expected CALL_RINGING and PRESENCE, got {compact(m)}")
    return ringing


async def presence_until(p: Peer, wanted: list[str], timeout: float = 3.0) -> float:
    """Reads PRESENCE messages until one lists exactly `wanted`; returns the seconds it took.

    If the last PRESENCE read already lists `wanted`, waits 150 ms for one still on its way instead: the server
    may coalesce changes within 100 ms (BEMYEARS-PROTOCOL.md), so a list that changed and changed back within
    them sends nothing."""
    t0 = time.monotonic()
    while p.presence == wanted:
        try:
            m = await asyncio.wait_for(p.ws.recv(), 0.15)
        except asyncio.TimeoutError:
            return 0.0
        m = json.loads(m)
        check(m.get("type") == "PRESENCE", f"{p.name}: expected PRESENCE, got {compact(m)}")
        p.presence = [i["username"] for i in m["payload"]["interpreters"]]
    while True:
        m = await p.expect("PRESENCE", max(0.05, timeout - (time.monotonic() - t0)))
        if p.presence == wanted:
            return time.monotonic() - t0


# ----------------------------------------------------------------------------------------------------------------
# Scenarios


async def registration(url: str, args) -> dict:
    s = suffix()
    a = await Peer.open(url, "a")
    # Anything before REGISTER → NOT_REGISTERED, socket stays open.
    await a.send({"type": "HEARTBEAT"})
    await a.expect_error("NOT_REGISTERED")
    # Invalid usernames → INVALID_USERNAME, retry allowed on the same socket.
    for bad in ("ab", "x" * 33, "bad name", "ünï-" + s, ""):
        await a.send({"type": "REGISTER", "payload": {"username": bad, "role": "interpreter"}})
        await a.expect_error("INVALID_USERNAME")
    reg = await a.register(f"Ivy.One_{s}", "interpreter")
    check(reg["payload"]["username"] == f"ivy.one_{s}", "username not lowercased")
    # Interpreters start UNAVAILABLE and get no PRESENCE.
    await a.send({"type": "HEARTBEAT"})
    await a.expect("HEARTBEAT_ACK")
    # The same name in another case on another socket → USERNAME_TAKEN; that socket may then register another name.
    b = await Peer.open(url, "b")
    await b.send({"type": "REGISTER", "payload": {"username": f"IVY.ONE_{s}", "role": "caller"}})
    await b.expect_error("USERNAME_TAKEN")
    await b.register(f"cal_{s}", "caller")
    await b.expect("PRESENCE")
    # REGISTER again on a registered socket → BAD_STATE.
    await b.send({"type": "REGISTER", "payload": {"username": f"other_{s}", "role": "caller"}})
    await b.expect_error("BAD_STATE")
    # Unknown type → UNKNOWN_TYPE, socket open.
    await b.send({"type": "NO_SUCH_TYPE"})
    await b.expect_error("UNKNOWN_TYPE")
    await b.send({"type": "HEARTBEAT"})
    await b.expect("HEARTBEAT_ACK")
    # Role rules: a caller cannot SET_STATE or accept; an interpreter cannot place calls.
    await b.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
    await b.expect_error("ROLE_FORBIDDEN")
    await a.send({"type": "CALL_REQUEST", "to": f"cal_{s}"})
    await a.expect_error("ROLE_FORBIDDEN")
    # Unknown user / a caller as the target → UNKNOWN_USER.
    await b.send({"type": "CALL_REQUEST", "to": f"nobody_{s}"})
    await b.expect_error("UNKNOWN_USER")
    # An interpreter that is UNAVAILABLE → BUSY NOT_AVAILABLE.
    await b.send({"type": "CALL_REQUEST", "to": f"ivy.one_{s}"})
    m = await b.expect("BUSY")
    check(m.get("to") == f"ivy.one_{s}" and m["payload"] == {"reason": "NOT_AVAILABLE"}, f"BUSY: {compact(m)}")
    check("callId" not in m, f"BUSY carries a callId: {compact(m)}")
    await a.silent(0.3)  # nothing reached the interpreter
    # After the first session leaves, its name is free again.
    await a.close()
    c = await Peer.open(url, "c")
    deadline = time.monotonic() + 3
    while True:
        await c.send({"type": "REGISTER", "payload": {"username": f"ivy.one_{s}", "role": "interpreter"}})
        m = await c.recv()
        if m["type"] == "REGISTERED":
            break
        check(m["type"] == "ERROR" and time.monotonic() < deadline, f"name not freed after close: {compact(m)}")
        await asyncio.sleep(0.1)
    for p in (b, c):
        await p.close()
    return {}


async def presence(url: str, args) -> dict:
    s = suffix()
    cal, first = await caller(url, f"cal_{s}")
    check(first == [], f"first PRESENCE should be empty, got {first}")
    zed = await interpreter(url, f"Zed_{s}", available=False)
    amy = await interpreter(url, f"amy_{s}", available=False)
    await cal.silent(0.3)  # UNAVAILABLE interpreters change nothing for callers
    latencies = []
    await zed.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
    await zed.expect("STATE")
    latencies.append(await presence_until(cal, [f"zed_{s}"]))
    await amy.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
    await amy.expect("STATE")
    latencies.append(await presence_until(cal, [f"amy_{s}", f"zed_{s}"]))  # byte order
    # A second caller gets the current list right after REGISTERED.
    cal2, first2 = await caller(url, f"cal2_{s}")
    check(first2 == [f"amy_{s}", f"zed_{s}"], f"second caller's first PRESENCE: {first2}")
    # SET_STATE to the same state: STATE again, no PRESENCE.
    await amy.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
    m = await amy.expect("STATE")
    check(m["payload"]["state"] == "AVAILABLE", f"STATE: {compact(m)}")
    await cal.silent(0.3)
    # An interpreter's socket closing removes it at once.
    await zed.close()
    for p in (cal, cal2):
        latencies.append(await presence_until(p, [f"amy_{s}"]))
    await amy.send({"type": "SET_STATE", "payload": {"state": "UNAVAILABLE"}})
    m = await amy.expect("STATE")
    check(m["payload"]["state"] == "UNAVAILABLE", f"STATE: {compact(m)}")
    for p in (cal, cal2):
        latencies.append(await presence_until(p, []))
    # A storm: amy toggles 40 times as fast as the rate limit lets her (~0.8 s). Changes are coalesced to at most
    # one PRESENCE per 100 ms per caller, and the last one a caller gets is the final list.
    storm_over = asyncio.Event()

    async def arrivals(p: Peer) -> list[float]:
        times = []
        while True:
            try:
                text = await asyncio.wait_for(p.ws.recv(), 0.4)
            except asyncio.TimeoutError:
                if storm_over.is_set():
                    return times
                continue
            m = json.loads(text)
            check(m["type"] == "PRESENCE", f"{p.name}: expected PRESENCE, got {compact(m)}")
            p.presence = [i["username"] for i in m["payload"]["interpreters"]]
            times.append(time.monotonic())

    readers = [asyncio.create_task(arrivals(p)) for p in (cal, cal2)]
    t0 = time.monotonic()
    for i in range(40):
        await amy.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE" if i % 2 == 0 else "UNAVAILABLE"}})
        await amy.expect("STATE")
        await asyncio.sleep(0.02)
    await amy.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
    await amy.expect("STATE")
    storm_s = time.monotonic() - t0
    storm_over.set()
    for p, times in zip((cal, cal2), await asyncio.gather(*readers)):
        check(p.presence == [f"amy_{s}"], f"{p.name}: the last PRESENCE of the storm lists {p.presence}")
        # Counted, not timed: arrival gaps shrink when this client reads late on a loaded machine.
        check(len(times) <= storm_s / 0.1 + 2,
              f"{p.name}: {len(times)} PRESENCE for 41 changes in {storm_s:.2f} s (at most one per 100 ms)")
    for p in (cal, cal2, amy):
        await p.close()
    return {"presence_latency_ms_max": round(1000 * max(latencies))}


async def call_flow(url: str, args) -> dict:
    s = suffix()
    ivy = await interpreter(url, f"ivy_{s}")
    cal, first = await caller(url, f"cal_{s}")
    check(first == [f"ivy_{s}"], f"caller's first PRESENCE: {first}")
    eve, _ = await caller(url, f"eve_{s}")

    # CALL_REQUEST (a client's own `from` is ignored) → CALL_RINGING to the caller, CALL_REQUEST to the interpreter.
    await cal.send({"type": "CALL_REQUEST", "to": f"ivy_{s}", "from": "mallory"})
    ringing = await ringing_and_hidden(cal, f"ivy_{s}")
    call_id = ringing.get("callId", "")
    check(UUID4.match(call_id) is not None, f"callId is not a lowercase UUID v4: {call_id!r}")
    check(ringing.get("to") == f"ivy_{s}" and ringing["payload"] == {"ringSec": 10}, f"CALL_RINGING: {compact(ringing)}")
    state = await ivy.expect("STATE")
    check(state["payload"]["state"] == "RINGING", f"interpreter STATE: {compact(state)}")
    request = await ivy.expect("CALL_REQUEST")
    check(request.get("callId") == call_id and request.get("from") == f"cal_{s}" and request.get("to") == f"ivy_{s}",
          f"CALL_REQUEST at the interpreter: {compact(request)}")
    # The interpreter disappears from every caller's list while ringing.
    await presence_until(eve, [])

    # Before accept: media signaling refused; a caller cannot accept; a stranger is not a party.
    await cal.send({"type": "OFFER", "callId": call_id, "payload": {"sdp": "v=0"}})
    m = await cal.expect_error("BAD_STATE")
    check(m.get("callId") == call_id, f"ERROR without the callId: {compact(m)}")
    await cal.send({"type": "CALL_ACCEPT", "callId": call_id})
    await cal.expect_error("ROLE_FORBIDDEN")
    await eve.send({"type": "HANGUP", "callId": call_id})
    await eve.expect_error("NOT_A_PARTY")
    await eve.send({"type": "ICE", "callId": "6f1c2b1e-1111-4111-8111-111111111111", "payload": {"candidate": "x"}})
    await eve.expect_error("UNKNOWN_CALL")
    # Eve calling the RINGING interpreter → BUSY, carrying the call the interpreter is in.
    await eve.send({"type": "CALL_REQUEST", "to": f"ivy_{s}"})
    m = await eve.expect("BUSY")
    check(m.get("callId") == call_id, f"BUSY without the interpreter's callId: {compact(m)}")

    # Accept → both IN_CALL, CALL_ACCEPT forwarded.
    await ivy.send({"type": "CALL_ACCEPT", "callId": call_id})
    state = await ivy.expect("STATE")
    check(state["payload"]["state"] == "IN_CALL", f"interpreter STATE after accept: {compact(state)}")
    accept = await cal.expect("CALL_ACCEPT", skip=("PRESENCE",))
    check(accept.get("callId") == call_id and accept.get("from") == f"ivy_{s}", f"CALL_ACCEPT: {compact(accept)}")

    # OFFER / ANSWER / ICE / VIDEO_VISIBLE / STATS_UPDATE relayed between the parties only, payload untouched.
    sdp = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\n"
    relays = [
        (cal, ivy, "OFFER", {"sdp": sdp, "type": "offer"}),
        (ivy, cal, "ANSWER", {"sdp": sdp.replace("4611", "9999"), "type": "answer"}),
        (cal, ivy, "ICE", {"candidate": {"candidate": "candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host",
                                         "sdpMid": "0", "sdpMLineIndex": 0}}),
        (ivy, cal, "ICE", {"candidate": None}),
        (cal, ivy, "VIDEO_VISIBLE", {"visible": True}),
        (ivy, cal, "VIDEO_VISIBLE", {"visible": True}),
        (cal, ivy, "STATS_UPDATE", {"rttMs": 12.5, "fps": 20, "nested": {"ü": [1, 2.50, "x"]}}),
    ]
    for sender, receiver, type_, payload in relays:
        await sender.send({"type": type_, "callId": call_id, "from": "mallory", "to": "mallory", "payload": payload})
        m = await receiver.expect(type_)
        check(m.get("callId") == call_id and m.get("from") == sender.name, f"{type_} relayed: {compact(m)}")
        check(m.get("payload") == payload, f"{type_} payload changed in transit: {compact(m)}")
    await eve.send({"type": "OFFER", "callId": call_id, "payload": {"sdp": "x"}})
    await eve.expect_error("NOT_A_PARTY")
    await cal.silent(0.2)
    await ivy.silent(0.2)

    # HANGUP → CALL_ENDED HANGUP to both, interpreter AVAILABLE; CALL_ENDED before the PRESENCE that lists it again.
    await cal.send({"type": "HANGUP", "callId": call_id})
    for p in (cal, ivy):
        m = await p.expect("CALL_ENDED")
        check(m.get("callId") == call_id and m["payload"] == {"reason": "HANGUP"}, f"{p.name}: {compact(m)}")
    state = await ivy.expect("STATE")
    check(state["payload"]["state"] == "AVAILABLE", f"interpreter STATE after hang-up: {compact(state)}")
    m = await cal.expect("PRESENCE")
    check([i["username"] for i in m["payload"]["interpreters"]] == [f"ivy_{s}"], f"PRESENCE after call: {compact(m)}")
    await presence_until(eve, [f"ivy_{s}"])
    # The ended call: relays refused, abuse report accepted (within 5 min), by a party only.
    await cal.send({"type": "ICE", "callId": call_id, "payload": {"candidate": "x"}})
    await cal.expect_error("UNKNOWN_CALL")
    await cal.send({"type": "REPORT_ABUSE", "callId": call_id, "payload": {"reason": "test report"}})
    m = await cal.expect("REPORT_RECEIVED")
    check(m.get("callId") == call_id, f"REPORT_RECEIVED: {compact(m)}")
    await eve.send({"type": "REPORT_ABUSE", "callId": call_id, "payload": {"reason": "x"}})
    await eve.expect_error("NOT_A_PARTY")

    # Disconnect of a party during a call ends it with DISCONNECTED.
    await cal.send({"type": "CALL_REQUEST", "to": f"ivy_{s}"})
    ringing = await cal.expect("CALL_RINGING", skip=("PRESENCE",))
    await ivy.expect("STATE")
    await ivy.expect("CALL_REQUEST")
    await ivy.send({"type": "CALL_ACCEPT", "callId": ringing["callId"]})
    await cal.expect("CALL_ACCEPT", skip=("PRESENCE",))
    await cal.close()
    m = await ivy.expect("CALL_ENDED", skip=("STATE",))
    check(m["payload"] == {"reason": "DISCONNECTED"}, f"CALL_ENDED after the caller left: {compact(m)}")
    await presence_until(eve, [f"ivy_{s}"])
    for p in (ivy, eve):
        await p.close()
    return {"callId": call_id}


async def decline(url: str, args) -> dict:
    s = suffix()
    ivy = await interpreter(url, f"ivy_{s}")
    cal, _ = await caller(url, f"cal_{s}")
    await cal.send({"type": "CALL_REQUEST", "to": f"ivy_{s}"})
    ringing = await ringing_and_hidden(cal, f"ivy_{s}")
    await ivy.expect("STATE")
    await ivy.expect("CALL_REQUEST")
    await ivy.send({"type": "CALL_DECLINE", "callId": ringing["callId"]})
    m = await cal.expect("CALL_DECLINE")
    check(m.get("callId") == ringing["callId"] and m.get("from") == f"ivy_{s}", f"CALL_DECLINE: {compact(m)}")
    state = await ivy.expect("STATE")
    check(state["payload"]["state"] == "AVAILABLE", f"interpreter STATE after decline: {compact(state)}")
    m = await cal.expect("PRESENCE")  # no CALL_ENDED after a decline; the interpreter is listed again
    check([i["username"] for i in m["payload"]["interpreters"]] == [f"ivy_{s}"], f"PRESENCE: {compact(m)}")
    await ivy.send({"type": "CALL_ACCEPT", "callId": ringing["callId"]})
    await ivy.expect_error("UNKNOWN_CALL")
    for p in (ivy, cal):
        await p.close()
    return {}


async def oversize(url: str, args) -> dict:
    s = suffix()

    def heartbeat_of(size: int) -> str:
        base = '{"type":"HEARTBEAT","payload":{"pad":""}}'
        text = base.replace('"pad":""', '"pad":"' + "x" * (size - len(base)) + '"')
        assert len(text.encode()) == size
        return text

    # Exactly 65,536 bytes is allowed.
    p = await Peer.open(url, "limit")
    await p.register(f"limit_{s}", "interpreter")
    await p.send(heartbeat_of(65_536))
    await p.expect("HEARTBEAT_ACK")
    # One byte more → ERROR PROTOCOL_ERROR, close 1009.
    await p.send(heartbeat_of(65_537))
    await p.expect_error("PROTOCOL_ERROR")
    code = await p.closed()
    check(code == 1009, f"a 65,537-byte frame: close code {code}, expected 1009")
    # Far larger (a single 1 MiB frame) → close 1009 as well, the session's presence gone.
    q = await Peer.open(url, "huge")
    await q.register(f"huge_{s}", "interpreter")
    await q.send(heartbeat_of(1 << 20))
    code2 = await q.closed()
    check(code2 == 1009, f"a 1 MiB frame: close code {code2}, expected 1009")
    # The same, fragmented: 200 KB in 4 KB fragments.
    r = await Peer.open(url, "fragments")
    await r.register(f"frag_{s}", "interpreter")
    text = heartbeat_of(200_000)
    await r.send([text[i:i + 4096] for i in range(0, len(text), 4096)])
    code3 = await r.closed()
    check(code3 == 1009, f"a 200 KB fragmented message: close code {code3}, expected 1009")
    # The names are free again (the sessions are gone).
    t = await Peer.open(url, "after")
    await t.register(f"huge_{s}", "interpreter")
    await t.close()
    return {"close_codes": [code, code2, code3]}


async def garbage(url: str, args) -> dict:
    s = suffix()
    codes = {}
    cases = [("not json", "not JSON"), ("[1,2,3]", "not an object"), ('{"type":5}', "type not a string"),
             ('{"payload":{}}', "no type"), ('{"type":"HEARTBEAT",', "truncated")]
    for i, (frame, label) in enumerate(cases):
        p = await Peer.open(url, label)
        if i % 2 == 0:
            await p.register(f"g{i}_{s}", "caller")
            await p.expect("PRESENCE")
        await p.send(frame)
        await p.expect_error("PROTOCOL_ERROR")
        codes[label] = await p.closed()
        check(codes[label] == 1002, f"{label}: close code {codes[label]}, expected 1002")
    # Binary frames are not part of the protocol either.
    p = await Peer.open(url, "binary")
    await p.send(b'{"type":"HEARTBEAT"}')
    await p.expect_error("PROTOCOL_ERROR")
    codes["binary"] = await p.closed()
    check(codes["binary"] == 1002, f"binary frame: close code {codes['binary']}, expected 1002")
    # A known type with a field of the wrong JSON type is refused, the socket stays open.
    q = await Peer.open(url, "field")
    await q.register(f"field_{s}", "caller")
    await q.expect("PRESENCE")
    await q.send('{"type":"CALL_REQUEST","to":42}')
    await q.expect_error("PROTOCOL_ERROR")
    await q.send({"type": "HEARTBEAT"})
    await q.expect("HEARTBEAT_ACK")
    await q.close()
    return {"close_codes": codes}


async def rate_limit(url: str, args) -> dict:
    s = suffix()
    p = await Peer.open(url, "flood")
    t_register = time.monotonic()
    await p.register(f"flood_{s}", "interpreter")  # takes one token of the full bucket
    n = 300
    t0 = time.monotonic()
    for _ in range(n):
        await p.send('{"type":"HEARTBEAT"}')
    sent_in = time.monotonic() - t0
    acks = limited = 0
    while acks + limited < n:
        m = await p.recv()
        if m["type"] == "HEARTBEAT_ACK":
            acks += 1
        else:
            check(m["type"] == "ERROR" and m["payload"]["code"] == "RATE_LIMITED", f"flood: {compact(m)}")
            limited += 1
    # The burst of 100 less REGISTER's token (refilled only if 20 ms passed since: 50/s), plus the refill while
    # the frames were arriving (at most 50/s since REGISTER).
    allowed = 99 + 50 * (time.monotonic() - t_register) + 2
    check(99 <= acks <= allowed, f"{acks} of {n} messages accepted in {sent_in:.2f} s; expected 99..{allowed:.0f} "
                                 "(burst 100, less REGISTER's token, plus 50/s)")
    check(limited == n - acks, "every refused message gets RATE_LIMITED")
    # Still open; tokens come back at 50/s.
    await asyncio.sleep(0.5)
    await p.send({"type": "HEARTBEAT"})
    await p.expect("HEARTBEAT_ACK")
    await p.close()
    return {"accepted": acks, "rate_limited": limited, "send_seconds": round(sent_in, 3)}


async def race(url: str, args) -> dict:
    s = suffix()
    n = 50
    ivy = await interpreter(url, f"ivy_{s}")
    callers = []
    for i in range(n):
        p, first = await caller(url, f"c{i:02d}_{s}")
        check(first == [f"ivy_{s}"], f"caller {i}: first PRESENCE {first}")
        callers.append(p)
    # Every caller sends CALL_REQUEST at once.
    gate = asyncio.Event()

    async def request(p: Peer) -> dict:
        await gate.wait()
        await p.send({"type": "CALL_REQUEST", "to": f"ivy_{s}"})
        return await first_answer(p)

    async def first_answer(p: Peer) -> dict:
        while True:
            m = await p.recv(10)
            if m["type"] in ("CALL_RINGING", "BUSY", "ERROR"):
                return m

    tasks = [asyncio.create_task(request(p)) for p in callers]
    await asyncio.sleep(0.05)
    gate.set()
    answers = await asyncio.gather(*tasks)
    ringing = [(p, m) for p, m in zip(callers, answers) if m["type"] == "CALL_RINGING"]
    busy = [m for m in answers if m["type"] == "BUSY"]
    others = [m for m in answers if m["type"] not in ("CALL_RINGING", "BUSY")]
    check(len(ringing) == 1 and len(busy) == n - 1 and not others,
          f"{len(ringing)} CALL_RINGING, {len(busy)} BUSY, others {[compact(m) for m in others[:3]]}")
    check(all(m.get("to") == f"ivy_{s}" and m["payload"] == {"reason": "NOT_AVAILABLE"} for m in busy),
          "BUSY without to/NOT_AVAILABLE")
    winner, ring = ringing[0]
    check(all(m.get("callId") == ring["callId"] for m in busy), "a BUSY without the winning callId")
    await ivy.expect("STATE")
    request_msg = await ivy.expect("CALL_REQUEST")
    check(request_msg["callId"] == ring["callId"] and request_msg["from"] == winner.name, "CALL_REQUEST to ivy")
    await ivy.silent(0.5)  # exactly one CALL_REQUEST reached the interpreter
    await ivy.send({"type": "CALL_ACCEPT", "callId": ring["callId"]})
    await ivy.expect("STATE")
    await winner.expect("CALL_ACCEPT", skip=("PRESENCE",))
    await winner.send({"type": "HANGUP", "callId": ring["callId"]})
    m = await winner.expect("CALL_ENDED", skip=("PRESENCE",))
    check(m["payload"]["reason"] == "HANGUP", f"winner: {compact(m)}")
    await ivy.expect("CALL_ENDED")
    state = await ivy.expect("STATE")
    check(state["payload"]["state"] == "AVAILABLE", f"interpreter after hang-up: {compact(state)}")
    # Every caller sees the interpreter AVAILABLE again.
    await asyncio.gather(*(presence_until(p, [f"ivy_{s}"], 5) for p in callers))
    for p in callers + [ivy]:
        await p.close()
    return {"ringing": 1, "busy": len(busy)}


async def heartbeat(url: str, args) -> dict:
    s = suffix()
    ivy = await interpreter(url, f"ivy_{s}")
    last_message_at = time.monotonic()  # the SET_STATE inside interpreter(): from now on ivy says nothing
    cal, first = await caller(url, f"cal_{s}")
    check(first == [f"ivy_{s}"], f"first PRESENCE {first}")

    async def keep_alive():
        while True:
            await asyncio.sleep(5)
            await cal.send({"type": "HEARTBEAT"})

    ticker = asyncio.create_task(keep_alive())
    try:
        dropped_at = None
        deadline = last_message_at + 25
        while time.monotonic() < deadline:
            m = await cal.recv(max(0.05, deadline - time.monotonic()))
            if m["type"] == "PRESENCE" and m["payload"]["interpreters"] == []:
                dropped_at = time.monotonic()
                break
            check(m["type"] in ("HEARTBEAT_ACK", "PRESENCE"), f"caller: {compact(m)}")
        check(dropped_at is not None, "the silent interpreter was still listed 25 s after its last message")
        silent_for = dropped_at - last_message_at
        # TTL 20 s (protocol), checked every 250 ms; the caller's keep-alive kept it registered meanwhile.
        check(19.0 <= silent_for <= 21.5, f"presence dropped {silent_for:.2f} s after the last message; expected ~20 s")
        code = await ivy.closed(3)
        check(code == 4001, f"expired session closed with {code}, expected 4001")
        await cal.send({"type": "HEARTBEAT"})
        await cal.expect("HEARTBEAT_ACK")
    finally:
        ticker.cancel()
    await cal.close()
    return {"dropped_after_s": round(silent_for, 2)}


# --- a raw WebSocket client that can stop reading (websockets always reads in the background)


def raw_open(url: str, rcvbuf: int = 4096) -> socket.socket:
    u = urllib.parse.urlsplit(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect: a small receive window
    sock.settimeout(10)
    sock.connect((u.hostname, u.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        check(chunk != b"", "raw client: connection closed during the handshake")
        head += chunk
    check(head.startswith(b"HTTP/1.1 101"), f"raw client: handshake answered {head[:40]!r}")
    return sock


def raw_send(sock: socket.socket, text: str) -> None:
    sock.sendall(raw_frame(0x1, text.encode()))


def raw_recv(sock: socket.socket) -> dict:
    def exact(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            check(chunk != b"", "raw client: connection closed")
            out += chunk
        return out

    b0, b1 = exact(2)
    length = b1 & 0x7F
    if length == 126:
        length = struct.unpack("!H", exact(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", exact(8))[0]
    payload = exact(length)
    check(b0 & 0x0F == 1, f"raw client: opcode {b0 & 0x0F}")
    return json.loads(payload)


async def slow_reader(url: str, args) -> dict:
    """An interpreter in a connected call that stops reading is disconnected: its call ends DISCONNECTED.

    The outcome is decided by design, not by a race between timers: the stalled interpreter still writes (it
    answers, reports video visible and keeps heartbeating), so no call deadline (RING_TIMEOUT, CONNECT_TIMEOUT)
    and no heartbeat expiry can end the call; only the server's verdict on a client that does not read can.
    The server gives up on it once 1 MiB waits for it or its socket has taken nothing for 5 s (the stall bound).
    """
    s = suffix()
    name = f"slow_{s}"

    def open_slow_interpreter():
        sock = raw_open(url)
        raw_send(sock, json.dumps({"type": "REGISTER", "payload": {"username": name, "role": "interpreter"}}))
        check(raw_recv(sock)["type"] == "REGISTERED", "raw REGISTER")
        raw_send(sock, json.dumps({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}}))
        check(raw_recv(sock)["type"] == "STATE", "raw SET_STATE")
        return sock

    sock = await asyncio.to_thread(open_slow_interpreter)
    cal, first = await caller(url, f"cal_{s}")
    check(first == [name], f"first PRESENCE {first}")
    await cal.send({"type": "CALL_REQUEST", "to": name})
    ringing = await ringing_and_hidden(cal, name)
    call_id = ringing["callId"]

    def accept_answer_and_show_video():
        while True:
            m = raw_recv(sock)
            if m["type"] == "CALL_REQUEST":
                raw_send(sock, json.dumps({"type": "CALL_ACCEPT", "callId": m["callId"]}))
                break
        # The call is connected from the server's point of view: an ANSWER relayed and video reported visible.
        raw_send(sock, json.dumps({"type": "ANSWER", "callId": call_id, "payload": {"sdp": "v=0\r\n"}}))
        raw_send(sock, json.dumps({"type": "VIDEO_VISIBLE", "callId": call_id, "payload": {"visible": True}}))

    await asyncio.to_thread(accept_answer_and_show_video)
    await cal.expect("CALL_ACCEPT", skip=("PRESENCE",))
    await cal.expect("ANSWER", skip=("PRESENCE",))
    await cal.expect("VIDEO_VISIBLE", skip=("PRESENCE",))

    # The interpreter keeps heartbeating (writing) while it never reads again.
    stop_heartbeats = asyncio.Event()

    async def heartbeats():
        while not stop_heartbeats.is_set():
            try:
                await asyncio.to_thread(raw_send, sock, json.dumps({"type": "HEARTBEAT"}))
            except OSError:
                return  # the server dropped the connection
            try:
                await asyncio.wait_for(stop_heartbeats.wait(), 5)
            except asyncio.TimeoutError:
                pass

    heartbeat_task = asyncio.create_task(heartbeats())
    # The caller sends ~60 KB OFFERs at 40/s (under the rate limit) until the call ends; nothing else can end it.
    blob = "a=x-pad:" + "y" * 60_000
    limit_s = 60  # a generous bound for a loaded machine; the server's stall bound is 5 s
    t0 = time.monotonic()
    sent = 0
    ended = None
    while time.monotonic() - t0 < limit_s:
        await cal.send({"type": "OFFER", "callId": call_id, "payload": {"sdp": blob}})
        sent += 1
        try:
            m = await asyncio.wait_for(cal.ws.recv(), 0.025)
        except asyncio.TimeoutError:
            continue
        m = json.loads(m)
        if m["type"] == "CALL_ENDED":
            ended = m
            break
        check(m["type"] == "PRESENCE", f"caller during the flood: {compact(m)}")
    elapsed = time.monotonic() - t0
    stop_heartbeats.set()
    await heartbeat_task
    check(ended is not None, f"waited {limit_s} s for the call of a client that stopped reading to end "
                             f"(DISCONNECTED) while sending {sent} OFFERs of {len(blob)} bytes; it did not end")
    check(ended["payload"] == {"reason": "DISCONNECTED"},
          f"the call of a client that stopped reading ended with {compact(ended)}, expected DISCONNECTED")
    # The server dropped the connection: the raw socket reaches EOF (or reset) once drained.
    def drained() -> bool:
        sock.settimeout(10)
        try:
            while sock.recv(1 << 16):
                pass
        except (ConnectionResetError, socket.timeout):
            pass
        return True

    await asyncio.to_thread(drained)
    sock.close()
    # The caller stays connected (OFFERs still in flight when the call ended are answered UNKNOWN_CALL).
    await cal.send({"type": "HEARTBEAT"})
    while True:
        m = await cal.recv()
        if m["type"] == "HEARTBEAT_ACK":
            break
        check(m["type"] == "PRESENCE" or m.get("payload", {}).get("code") == "UNKNOWN_CALL", f"caller: {compact(m)}")
    await cal.close()
    return {"offers_sent": sent, "bytes_sent": sent * len(blob), "disconnected_after_s": round(elapsed, 2)}


# --- raw frames: any opcode, FIN, RSV bits and mask flag (RFC 6455 §5.2), for what `websockets` will not send

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def raw_frame(opcode: int, payload: bytes = b"", fin: bool = True, rsv: int = 0, mask: bool = True) -> bytes:
    """One client frame; `rsv` is the three RSV bits (0b100 = RSV1)."""
    header = bytes([(0x80 if fin else 0) | (rsv & 0x7) << 4 | opcode & 0x0F])
    flag = 0x80 if mask else 0
    if len(payload) < 126:
        header += bytes([flag | len(payload)])
    elif len(payload) < 65536:
        header += bytes([flag | 126]) + struct.pack("!H", len(payload))
    else:
        header += bytes([flag | 127]) + struct.pack("!Q", len(payload))
    if not mask:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def raw_read_frame(sock: socket.socket, what: str) -> tuple[bool, int, bytes] | None:
    """The server's next frame as (FIN, opcode, payload); None when the connection ends between frames."""
    def exact(n: int, first: bool = False) -> bytes | None:
        out = b""
        while len(out) < n:
            try:
                chunk = sock.recv(n - len(out))
            except socket.timeout:
                raise CheckFailed(f"{what}: no frame from the server within {sock.gettimeout()} s") from None
            except ConnectionResetError:
                raise CheckFailed(f"{what}: connection reset while reading a frame (after {out!r})") from None
            if chunk == b"":
                check(first and out == b"", f"{what}: connection ended in the middle of a frame ({out!r})")
                return None
            out += chunk
        return out

    head = exact(2, first=True)
    if head is None:
        return None
    b0, b1 = head
    # RFC 6455 §5.1, §5.2: a server never masks, and sets no RSV bit without an extension.
    check(b1 & 0x80 == 0, f"{what}: the server sent a masked frame (header {head.hex()})")
    check(b0 & 0x70 == 0, f"{what}: the server set an RSV bit without an extension (header {head.hex()})")
    length = b1 & 0x7F
    if length == 126:
        length = struct.unpack("!H", exact(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", exact(8))[0]
    payload = exact(length) if length else b""
    return bool(b0 & 0x80), b0 & 0x0F, payload


def raw_read(sock: socket.socket, what: str) -> tuple[int, bytes] | None:
    """The server's next message or control frame as (opcode, payload), fragments joined; None at the end."""
    frame = raw_read_frame(sock, what)
    if frame is None:
        return None
    fin, opcode, payload = frame
    while not fin and opcode in (OP_TEXT, OP_BINARY):
        more = raw_read_frame(sock, what)
        check(more is not None, f"{what}: connection ended in the middle of a fragmented message")
        fin, cont, data = more
        check(cont == OP_CONT, f"{what}: the server interleaved opcode {cont:#x} within a fragmented message")
        payload += data
    return opcode, payload


def raw_expect_text(sock: socket.socket, what: str) -> dict:
    m = raw_read(sock, what)
    check(m is not None, f"{what}: the connection ended while waiting for a message")
    check(m[0] == OP_TEXT, f"{what}: expected a text frame, got opcode {m[0]:#x} {m[1][:100]!r}")
    return json.loads(m[1])


def raw_register(url: str, name: str) -> socket.socket:
    """A raw socket registered as an (unavailable) interpreter: no PRESENCE comes to it."""
    sock = raw_open(url, rcvbuf=1 << 16)
    sock.sendall(raw_frame(OP_TEXT, json.dumps(
        {"type": "REGISTER", "payload": {"username": name, "role": "interpreter"}}).encode()))
    m = raw_expect_text(sock, name)
    check(m["type"] == "REGISTERED", f"{name}: raw REGISTER answered {compact(m)}")
    return sock


def raw_until_closed(sock: socket.socket, what: str) -> tuple[int | None, list[dict]]:
    """Reads to the server's close frame, then to the end of the connection (EOF or reset) within 10 s.

    Returns the close code (None: a close frame without one) and the text messages before it."""
    texts = []
    while True:
        m = raw_read(sock, what)
        check(m is not None,
              f"{what}: the connection ended without a close frame (after {[compact(t) for t in texts]})")
        opcode, payload = m
        if opcode == OP_CLOSE:
            check(len(payload) != 1, f"{what}: a close frame with a 1-byte payload {payload!r}")
            code = struct.unpack("!H", payload[:2])[0] if payload else None
            break
        check(opcode == OP_TEXT, f"{what}: before the close frame, opcode {opcode:#x} {payload[:100]!r}")
        texts.append(json.loads(payload))
    deadline = time.monotonic() + 10
    try:
        while True:
            sock.settimeout(max(0.05, deadline - time.monotonic()))
            rest = sock.recv(1 << 16)
            if rest == b"":
                break
            check(False, f"{what}: {len(rest)} bytes after the close frame: {rest[:40]!r}")
    except socket.timeout:
        raise CheckFailed(f"{what}: the TCP connection did not end within 10 s of the close frame ({code})") from None
    except ConnectionResetError:
        pass  # the server dropped the connection: it ended too
    sock.close()
    return code, texts


async def framing(url: str, args) -> dict:
    """RFC 6455 framing, with `websockets` and with raw frames (bits `websockets` will not set):

    - a fragmented text message is one message (HEARTBEAT → HEARTBEAT_ACK), a ping between its fragments answered;
    - a ping gets a pong with its payload (3 and 125 bytes); an unsolicited pong is ignored;
    - the client's close 1000 is answered with close 1000, then the TCP connection ends;
    - protocol violations close with the RFC's code, after nothing the violating frame said was acted on: an
      unmasked frame, RSV1/RSV2/RSV3, a continuation with no message started, a new text frame within a
      fragmented message, reserved opcodes 0x3 and 0xB, a fragmented ping and a 126-byte ping → 1002; text that
      is not UTF-8 → 1007; a fragmented message over the read limit (2 × 65,536) → 1009; a (fragmented) binary
      message → ERROR PROTOCOL_ERROR then 1002. Each time the TCP connection ends after the close frame;
    - the server is healthy afterwards: a new client registers.
    """
    s = suffix()
    heartbeat_ = b'{"type":"HEARTBEAT"}'

    # 1. websockets: a fragmented text message (websockets ends it with an empty FIN continuation).
    p = await Peer.open(url, "ws-frag")
    await p.register(f"wsf_{s}", "interpreter")
    await p.ws.send(['{"type":', '"HEARTBEAT"}'])
    await p.expect("HEARTBEAT_ACK", 10)
    # … and with a ping between its fragments.
    waiters = []

    async def parts():
        yield '{"type":'
        waiters.append(await p.ws.ping(b"between"))
        yield '"HEART'
        yield 'BEAT"}'

    await p.ws.send(parts())
    try:
        await asyncio.wait_for(waiters[0], 10)
    except asyncio.TimeoutError:
        raise CheckFailed("websockets: no pong within 10 s for a ping between fragments") from None
    await p.expect("HEARTBEAT_ACK", 10)
    # 2. A ping with a payload: websockets resolves the waiter only for a pong with the same payload.
    for payload in (b"abc", bytes(range(125))):
        waiter = await p.ws.ping(payload)
        try:
            await asyncio.wait_for(waiter, 10)
        except asyncio.TimeoutError:
            raise CheckFailed(f"websockets: no pong carrying the ping's {len(payload)}-byte payload within 10 s") \
                from None
    # 3. Close 1000: answered with 1000 (close_code is the server's code once the connection is closed).
    await p.ws.close(1000)
    check(p.ws.protocol.close_rcvd is not None, "websockets: close 1000 was not answered with a close frame")
    check(p.ws.close_code == 1000, f"websockets: close 1000 answered with {p.ws.close_code}, expected 1000")
    check(p.ws.state.name == "CLOSED", f"websockets: connection {p.ws.state.name} after close, expected CLOSED")

    # The same with raw frames.
    def raw_fragments_ping_close() -> dict:
        what = "raw fragments"
        sock = raw_register(url, f"rawf_{s}")
        sock.sendall(raw_frame(OP_TEXT, b'{"type":', fin=False) + raw_frame(OP_CONT, b'"HEARTBEAT"}'))
        m = raw_expect_text(sock, what)
        check(m["type"] == "HEARTBEAT_ACK", f"{what}: text FIN=0 + continuation FIN=1 answered {compact(m)}")
        # A ping between the fragments of a message: its pong, and the message's answer, in either order.
        sock.sendall(raw_frame(OP_TEXT, b'{"type"', fin=False) + raw_frame(OP_PING, b"mid")
                     + raw_frame(OP_CONT, b':"HEART', fin=False) + raw_frame(OP_CONT, b'BEAT"}'))
        got = []
        for _ in range(2):
            m = raw_read(sock, what)
            check(m is not None, f"{what}: the connection ended after a ping between fragments (got {got})")
            got.append((m[0], m[1] if m[0] != OP_TEXT else json.loads(m[1]).get("type")))
        check(sorted(got) == sorted([(OP_TEXT, "HEARTBEAT_ACK"), (OP_PONG, b"mid")]),
              f"{what}: a message with a ping between its fragments: expected HEARTBEAT_ACK and pong b'mid', got {got}")
        # Pings: a pong with the same payload, empty and the largest a control frame may carry.
        for payload in (b"abc", b"", bytes(range(125))):
            sock.sendall(raw_frame(OP_PING, payload))
            m = raw_read(sock, what)
            check(m == (OP_PONG, payload), f"{what}: ping {payload[:10]!r}… ({len(payload)} bytes) answered {m!r}")
        # An unsolicited pong is not answered; the next frame is the answer to the next message.
        sock.sendall(raw_frame(OP_PONG, b"unsolicited") + raw_frame(OP_TEXT, heartbeat_))
        m = raw_expect_text(sock, what)
        check(m["type"] == "HEARTBEAT_ACK", f"{what}: after an unsolicited pong: {compact(m)}")
        # Close 1000 (masked, with a reason): the server answers close 1000, then the TCP connection ends.
        sock.sendall(raw_frame(OP_CLOSE, struct.pack("!H", 1000) + b"bye"))
        code, texts = raw_until_closed(sock, "raw close 1000")
        check(code == 1000, f"raw close 1000 answered with close {code}, expected 1000")
        check(texts == [], f"raw close 1000: messages before the close answer: {texts}")
        return {"raw_close": code}

    facts = await asyncio.to_thread(raw_fragments_ping_close)

    # 4. Protocol violations, each on its own registered raw connection.
    start = b'{"type":"HEARTBEAT","payload":{"pad":"'
    first = start + b"x" * (50_000 - len(start))
    violations = [
        ("unmasked frame", [raw_frame(OP_TEXT, heartbeat_, mask=False)], 1002),
        ("RSV1", [raw_frame(OP_TEXT, heartbeat_, rsv=0b100)], 1002),
        ("RSV2", [raw_frame(OP_TEXT, heartbeat_, rsv=0b010)], 1002),
        ("RSV3", [raw_frame(OP_TEXT, heartbeat_, rsv=0b001)], 1002),
        ("continuation without a message", [raw_frame(OP_CONT, heartbeat_)], 1002),
        ("text frame within a fragmented message",
         [raw_frame(OP_TEXT, b'{"type":', fin=False), raw_frame(OP_TEXT, heartbeat_)], 1002),
        ("reserved opcode 0x3", [raw_frame(0x3, heartbeat_)], 1002),
        ("reserved control opcode 0xB", [raw_frame(0xB, b"x")], 1002),
        ("fragmented ping", [raw_frame(OP_PING, b"x", fin=False)], 1002),
        ("126-byte ping", [raw_frame(OP_PING, b"p" * 126)], 1002),
        ("text not UTF-8", [raw_frame(OP_TEXT, b"\xff\xfe")], 1007),
        ("3 x 50,000-byte fragments",
         [raw_frame(OP_TEXT, first, fin=False), raw_frame(OP_CONT, b"x" * 50_000, fin=False),
          raw_frame(OP_CONT, b"x" * 50_000 + b'"}}')], 1009),
        ("fragmented binary message", [raw_frame(OP_BINARY, b'{"type":', fin=False),
                                       raw_frame(OP_CONT, b'"HEARTBEAT"}')], 1002),
    ]

    def violate(i: int, label: str, frames: list[bytes]) -> tuple[int | None, list[dict]]:
        sock = raw_register(url, f"bad{i:02d}_{s}")
        sock.sendall(b"".join(frames))
        return raw_until_closed(sock, label)

    codes = {}
    for i, (label, frames, expected) in enumerate(violations):
        code, texts = await asyncio.to_thread(violate, i, label, frames)
        codes[label] = code
        types = [t.get("type") for t in texts]
        check(code == expected, f"{label}: close code {code}, expected {expected} (messages before it: {types})")
        check("HEARTBEAT_ACK" not in types, f"{label}: the server acted on the frame that broke the protocol")
        if label == "fragmented binary message":
            check([(t.get("type"), t.get("payload", {}).get("code")) for t in texts] == [("ERROR", "PROTOCOL_ERROR")],
                  f"{label}: expected one ERROR PROTOCOL_ERROR before the close, got {[compact(t) for t in texts]}")

    # 5. The server is healthy: a new client registers and is answered.
    q, _ = await caller(url, f"after_{s}")
    await q.send({"type": "HEARTBEAT"})
    await q.expect("HEARTBEAT_ACK", 10, skip=("PRESENCE",))
    await q.close()
    return {**facts, "ws_close": 1000, "close_codes": codes}


async def turn_credentials(url: str, args) -> dict:
    check(bool(args.turn_secret), "turn_credentials needs --turn-secret")
    s = suffix()
    p = await Peer.open(url, "turn")
    reg = await p.register(f"turn_{s}", "interpreter")
    servers = reg["payload"]["iceServers"]
    turn = [x for x in servers if any(u.startswith("turn:") for u in x["urls"])]
    check(len(turn) == 1, f"expected one TURN entry in iceServers: {servers}")
    t = turn[0]
    check(sorted(t["urls"]) == sorted([f"{args.turn_url}?transport=udp", f"{args.turn_url}?transport=tcp"]),
          f"TURN urls {t['urls']}")
    expiry, _, name = t["username"].partition(":")
    check(expiry.isdigit() and name != "" and f"turn_{s}" not in t["username"],
          f"TURN username must be expiry:opaque-name (not the username): {t['username']!r}")
    lifetime = int(expiry) - time.time()
    check(11400 - 120 <= lifetime <= 11400 + 5, f"credential valid for {lifetime:.0f} s, expected 3 h 10 min")
    expected = base64.b64encode(hmac.new(args.turn_secret.encode(), t["username"].encode(), hashlib.sha1).digest())
    check(t["credential"] == expected.decode(), "TURN credential is not base64(HMAC-SHA1(secret, username))")
    # Each registration gets its own credential.
    q = await Peer.open(url, "turn2")
    reg2 = await q.register(f"turn2_{s}", "caller")
    t2 = [x for x in reg2["payload"]["iceServers"] if "username" in x][0]
    check(t2["username"] != t["username"], "two sessions got the same TURN username")

    def fresh_turn(message: dict, who: str) -> dict:
        entries = [x for x in message.get("payload", {}).get("iceServers", []) if "username" in x]
        check(len(entries) == 1, f"{who}: {message['type']} without fresh TURN credentials: {compact(message)}")
        e = entries[0]
        mac = base64.b64encode(hmac.new(args.turn_secret.encode(), e["username"].encode(), hashlib.sha1).digest())
        check(e["credential"] == mac.decode(), f"{who}: {message['type']}'s TURN credential is not the HMAC")
        left = int(e["username"].partition(":")[0]) - time.time()
        check(11400 - 120 <= left <= 11400 + 5, f"{who}: {message['type']}'s credential valid for {left:.0f} s")
        return e

    # Each call hands both parties fresh credentials (the caller's in CALL_RINGING, the interpreter's in
    # CALL_REQUEST), and ICE_SERVERS renews them during the call (before an ICE restart).
    await p.send({"type": "SET_STATE", "payload": {"state": "AVAILABLE"}})
    await p.expect("STATE")
    await q.send({"type": "CALL_REQUEST", "to": f"turn_{s}"})
    ringing = await q.expect("CALL_RINGING", skip=("PRESENCE",))
    check(ringing["payload"].get("ringSec") == 10, f"CALL_RINGING: {compact(ringing)}")
    fresh_turn(ringing, q.name)
    await p.expect("STATE")
    fresh_turn(await p.expect("CALL_REQUEST"), p.name)
    call_id = ringing["callId"]
    await q.send({"type": "ICE_SERVERS", "callId": call_id})
    m = await q.expect("ICE_SERVERS", skip=("PRESENCE",))
    check(m.get("callId") == call_id, f"ICE_SERVERS answer without the callId: {compact(m)}")
    fresh_turn(m, q.name)
    stranger = await Peer.open(url, "turn3")
    await stranger.register(f"turn3_{s}", "caller")
    await stranger.send({"type": "ICE_SERVERS", "callId": call_id})
    m = await stranger.expect("ERROR", skip=("PRESENCE",))
    check(m["payload"]["code"] == "NOT_A_PARTY", f"ICE_SERVERS from a stranger: {compact(m)}")
    for x in (p, q, stranger):
        await x.close()
    return {"lifetime_s": round(lifetime)}


async def cross_node(url: str, args) -> dict:
    """Two bemyears-server processes sharing one PostgreSQL store: interpreter on one, callers on the other."""
    check(bool(args.url2), "cross_node needs --url2 (the second node)")
    s = suffix()
    ivy = await interpreter(url, f"ivy_{s}")
    cal, first = await caller(args.url2, f"cal_{s}")
    check(first == [f"ivy_{s}"], f"node B's caller does not see node A's interpreter: {first}")
    # Usernames are unique across nodes.
    dup = await Peer.open(args.url2, "dup")
    await dup.send({"type": "REGISTER", "payload": {"username": f"IVY_{s}", "role": "interpreter"}})
    await dup.expect_error("USERNAME_TAKEN")
    await dup.close()

    await cal.send({"type": "CALL_REQUEST", "to": f"ivy_{s}"})
    ringing = await ringing_and_hidden(cal, f"ivy_{s}")
    call_id = ringing["callId"]
    await ivy.expect("STATE")
    request = await ivy.expect("CALL_REQUEST")
    check(request["callId"] == call_id and request["from"] == f"cal_{s}", f"CALL_REQUEST across nodes: {compact(request)}")
    await ivy.send({"type": "CALL_ACCEPT", "callId": call_id})
    await ivy.expect("STATE")
    await cal.expect("CALL_ACCEPT", skip=("PRESENCE",))
    big_sdp = "v=0\r\n" + "a=x-pad:" + "z" * 60_000 + "\r\n"  # too big for one NOTIFY
    relays = [(cal, ivy, "OFFER", {"sdp": big_sdp}), (cal, ivy, "ICE", {"candidate": "c1"}),
              (ivy, cal, "ANSWER", {"sdp": "v=0 answer"}), (ivy, cal, "ICE", {"candidate": "c2"})]
    for sender, receiver, type_, payload in relays:
        await sender.send({"type": type_, "callId": call_id, "payload": payload})
    for sender, receiver, type_, payload in relays:  # in order per sender
        m = await receiver.expect(type_, skip=("PRESENCE",))
        check(m["payload"] == payload and m["from"] == sender.name, f"{type_} across nodes: {compact(m)[:200]}")
    await cal.send({"type": "HANGUP", "callId": call_id})
    m = await ivy.expect("CALL_ENDED")
    check(m["payload"] == {"reason": "HANGUP"}, f"interpreter: {compact(m)}")
    m = await cal.expect("CALL_ENDED", skip=())
    check(m["payload"] == {"reason": "HANGUP"}, f"caller: {compact(m)}")
    await presence_until(cal, [f"ivy_{s}"], 5)  # CALL_ENDED came first

    # The race across nodes: 10 callers on each node, one CALL_RINGING.
    callers = []
    for i in range(20):
        p, _ = await caller(url if i % 2 else args.url2, f"r{i:02d}_{s}")
        callers.append(p)
    for p in callers:
        await p.send({"type": "CALL_REQUEST", "to": f"ivy_{s}"})

    async def answer(p: Peer) -> str:
        while True:
            m = await p.recv(10)
            if m["type"] in ("CALL_RINGING", "BUSY", "ERROR"):
                return m["type"]

    answers = await asyncio.gather(*(answer(p) for p in callers))
    check(answers.count("CALL_RINGING") == 1 and answers.count("BUSY") == 19, f"race across nodes: {answers}")
    # The interpreter's node goes away: its presence disappears on the other node.
    await ivy.close()
    await presence_until(cal, [], 5)
    for p in callers + [cal]:
        await p.close()
    return {"callId": call_id}


async def origin(url: str, args) -> dict:
    """Only the server's own pages (and --allowed-origin) may open /ws; programs without an Origin may too."""
    parsed = urllib.parse.urlparse(url)
    own = f"http://{parsed.netloc}"
    # (The server's own host and port over https is its own page behind a TLS proxy: allowed.)
    foreign = ["http://evil.example", "null", f"http://{parsed.hostname}:1", f"http://{parsed.hostname}.evil.example",
               "https://app.example.org.evil.example"]
    for page in foreign:
        try:
            ws = await connect(url, origin=page, open_timeout=10, ping_interval=None)
        except websockets.exceptions.InvalidStatus as e:
            # The upgrade is refused: no WebSocket exists (the server's log says why, for its operator).
            check(e.response.status_code in (400, 403), f"origin {page}: HTTP {e.response.status_code}")
        else:
            await ws.close()
            raise CheckFailed(f"a page from {page} opened the signaling WebSocket")
    # A program's library may send the URL's own ws:// origin (browsers never do): a program, let in.
    allowed = [own, f"https://{parsed.netloc}", None, f"ws://{parsed.hostname}"] + (
        [args.allowed_origin] if args.allowed_origin else [])
    for page in allowed:
        ws = await connect(url, origin=page, open_timeout=10, ping_interval=None, max_size=2**22)
        peer = Peer(f"origin {page}", ws)
        await peer.register(f"orig_{suffix()}", "caller")
        await ws.close()
    return {"refused": len(foreign), "allowed": len(allowed)}


async def pg_restart(url: str, args) -> dict:
    """Calls in progress while PostgreSQL restarts under a node with `--store postgres://` (issue 17 item 13).

    The Swift test stops PostgreSQL when this prints {"event": "calls_up"} and creates OUTAGE_DIR/down; meanwhile a
    caller hangs up and an interpreter in a call disconnects; this prints {"event": "acted"}, the test starts
    PostgreSQL again and creates OUTAGE_DIR/up. Within 20 s of that: every call has ended with its reason (HANGUP,
    DISCONNECTED, the ringing one RING_TIMEOUT), the disconnected name is free, presence is right, calls work."""
    check(bool(args.outage_dir), "pg_restart needs --outage-dir")
    s = suffix()
    ivys = [await interpreter(url, f"ivy{i}_{s}") for i in (1, 2, 3)]
    cals = [(await caller(url, f"cal{i}_{s}"))[0] for i in (1, 2, 3)]
    watcher, _ = await caller(url, f"walt_{s}")
    peers = ivys + cals + [watcher]

    async def heartbeats() -> None:  # the test outlasts the 20 s presence TTL
        while True:
            await asyncio.sleep(5)
            for p in peers:
                if p.ws.state.name == "OPEN":
                    await p.send({"type": "HEARTBEAT"})

    async def until(p: Peer, type_: str, timeout: float = 10.0) -> dict:
        """The next message of `type_`; PRESENCE (kept in p.presence), acks and other traffic are passed over."""
        deadline = time.monotonic() + timeout
        while True:
            m = await p.recv(max(0.05, deadline - time.monotonic()))
            if m["type"] == type_:
                return m

    async def wait_file(name: str) -> None:
        path = os.path.join(args.outage_dir, name)
        deadline = time.monotonic() + 120
        while not os.path.exists(path):
            check(time.monotonic() < deadline, f"the test never created {name}")
            await asyncio.sleep(0.05)

    beat = asyncio.create_task(heartbeats())
    try:
        call_ids = []
        for cal, ivy in zip(cals[:2], ivys[:2]):
            await cal.send({"type": "CALL_REQUEST", "to": ivy.name})
            call_id = (await until(cal, "CALL_RINGING"))["callId"]
            await until(ivy, "CALL_REQUEST")
            await ivy.send({"type": "CALL_ACCEPT", "callId": call_id})
            await until(cal, "CALL_ACCEPT")
            for p in (cal, ivy):
                await p.send({"type": "VIDEO_VISIBLE", "callId": call_id, "payload": {"visible": True}})
            call_ids.append(call_id)
        await cals[2].send({"type": "CALL_REQUEST", "to": ivys[2].name})
        await until(cals[2], "CALL_RINGING")
        print(json.dumps({"event": "calls_up"}), flush=True)
        await wait_file("down")
        # PostgreSQL is down: a hang-up and a disconnect the store cannot take now.
        await cals[0].send({"type": "HANGUP", "callId": call_ids[0]})
        await ivys[1].close()
        print(json.dumps({"event": "acted"}), flush=True)
        await wait_file("up")
        t_up = time.monotonic()
        for p, reason in ((cals[0], "HANGUP"), (ivys[0], "HANGUP"), (cals[1], "DISCONNECTED"),
                          (cals[2], "RING_TIMEOUT"), (ivys[2], "RING_TIMEOUT")):
            m = await until(p, "CALL_ENDED", max(0.05, 20 - (time.monotonic() - t_up)))
            check(m["payload"]["reason"] == reason, f"{p.name}: {compact(m)} (expected {reason})")
        ended_s = time.monotonic() - t_up
        # The disconnected interpreter's name is free again.
        again = await Peer.open(url, "ivy2-again")
        await again.register(ivys[1].name, "interpreter")
        peers.append(again)
        wanted = sorted([ivys[0].name, ivys[2].name])
        while watcher.presence != wanted:
            await until(watcher, "PRESENCE", max(0.05, 20 - (time.monotonic() - t_up)))
        presence_s = time.monotonic() - t_up
        # Calls work again.
        await cals[0].send({"type": "CALL_REQUEST", "to": ivys[0].name})
        call_id = (await until(cals[0], "CALL_RINGING"))["callId"]
        await cals[0].send({"type": "HANGUP", "callId": call_id})
        await until(cals[0], "CALL_ENDED")
    finally:
        beat.cancel()
    for p in peers:
        await p.close()
    return {"ended_after_up_s": round(ended_s, 2), "presence_after_up_s": round(presence_s, 2)}


SCENARIOS = {f.__name__: f for f in (registration, presence, call_flow, decline, oversize, garbage, rate_limit, race, pg_restart,
                                      heartbeat, slow_reader, framing, turn_credentials, cross_node, origin)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--url", required=True, help="ws://127.0.0.1:PORT/ws")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--turn-secret", default="")
    ap.add_argument("--turn-url", default="")
    ap.add_argument("--url2", default="", help="a second node's ws:// URL (cross_node)")
    ap.add_argument("--allowed-origin", default="", help="an origin the server was started to allow (origin)")
    ap.add_argument("--outage-dir", default="", help="where the test signals PostgreSQL down/up (pg_restart)")
    args = ap.parse_args()
    result: dict = {"ok": False, "scenario": args.scenario}
    code = 1
    if websockets is None:
        result["reason"] = "the Python package websockets is missing: pip install websockets==15.0.1"
        code = 2
    else:
        result["websockets"] = websockets.__version__
        try:
            print(json.dumps({"event": "ready"}), flush=True)  # imports done: --timeout counts from here
            details = asyncio.run(asyncio.wait_for(SCENARIOS[args.scenario](args.url, args), args.timeout))
            result.update(details or {})
            result["ok"] = True
            code = 0
        except CheckFailed as e:
            result["reason"] = str(e)
        except (OSError, websockets.exceptions.InvalidHandshake) as e:
            result["reason"] = f"cannot talk to the server at {args.url}: {e}"
            code = 2
        except asyncio.TimeoutError:
            result["reason"] = f"the scenario exceeded --timeout {args.timeout:.0f} s"
        except Exception as e:  # noqa: BLE001 - one JSON line whatever happened
            result["reason"] = f"{type(e).__name__}: {e}"
    result["total_ms"] = round(1000 * (time.monotonic() - START))
    print(json.dumps(result), flush=True)
    if code:
        log("FAILED", result.get("reason"))
    return code


if __name__ == "__main__":
    sys.exit(main())
