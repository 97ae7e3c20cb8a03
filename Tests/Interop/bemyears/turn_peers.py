#!/usr/bin/env python3
"""Which peers a coturn relays to, asked as a TURN client (aioice, an independent implementation).

    turn_peers.py --server 127.0.0.1:PORT --username U --password P --denied 10.1.2.3,... --allowed 8.8.8.8,...

Allocates a UDP relay with the TURN REST credential, then binds a channel to each peer (a ChannelBind installs the
permission coturn checks; nothing is sent to the peer). Denied peers must be refused with 403 (Forbidden IP),
allowed ones accepted. Prints {"event": "ready"}, then one JSON line: {"ok": true|false, "reason": …, "refused":
{peer: code}}. Exit status: 0 passed, 1 a check failed, 2 the environment is not usable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

try:
    from aioice import stun
    from aioice.turn import TurnClientUdpProtocol
except ImportError:  # pragma: no cover - reported as an environment error
    stun = None


def say(result: dict) -> None:
    print(json.dumps(result), flush=True)


async def run(args) -> dict:
    host, _, port = args.server.rpartition(":")
    server = (host, int(port))
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_datagram_endpoint(
        lambda: TurnClientUdpProtocol(server, username=args.username, password=args.password, lifetime=600,
                                      channel_refresh_time=500),
        remote_addr=server)
    try:
        relayed = await asyncio.wait_for(client.connect(), 10)
        outcome: dict[str, int] = {}
        peers = [(p, False) for p in args.denied.split(",") if p] + [(p, True) for p in args.allowed.split(",") if p]
        for number, (peer, _) in enumerate(peers):
            try:
                await asyncio.wait_for(client.channel_bind(0x4000 + number, (peer, 9)), 10)
                outcome[peer] = 200
            except stun.TransactionFailed as e:
                outcome[peer] = e.response.error_code
        wrong = [f"{p}: {outcome[p]} (expected {'200' if ok else '403'})" for p, ok in peers
                 if (outcome[p] == 200) != ok or (not ok and outcome[p] != 403)]
        if client.refresh_task:
            client.refresh_task.cancel()
        return {"ok": not wrong, "reason": "; ".join(wrong), "relayed": list(relayed), "outcome": outcome}
    finally:
        transport.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--denied", default="")
    parser.add_argument("--allowed", default="")
    args = parser.parse_args()
    if stun is None:
        say({"ok": False, "reason": "aioice is missing: run `make test` (it installs aiortc and aioice into .venv)"})
        return 2
    say({"event": "ready"})
    try:
        result = asyncio.run(run(args))
    except Exception as e:  # noqa: BLE001 - any failure is a failed check with its reason
        result = {"ok": False, "reason": f"{type(e).__name__}: {e}"}
    say(result)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
