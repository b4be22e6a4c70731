"""Spot checks of a few deviations of bench/results/wild.md against a running ahpx mock, by
hand, without the harness (a plain `websockets` client; bench tooling, not a test).

    bench/wild/ahpx/mock.sh echo &      # prints ws://127.0.0.1:PORT
    /work/main/.venv/bin/python bench/wild/ahpx/spot_check.py ws://127.0.0.1:PORT

Two connections A and B (B connects last). Prints what each saw for: A's dispatch (D9: the
echo goes to the newest socket; D10a: under B's clientId), a snapshot after an accepted
`session/titleChanged` (D11), a `chat/turnCancelled` on a chat that does not exist (D7, D8), and
a `dispatchAction` without `action` (D5: the mock dies; the last line says whether the socket
closed). The last check kills the mock.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

ROOT = "ahp-root://"


async def drain(ws: ClientConnection, quiet_s: float = 0.5) -> list[Any]:
    """Every frame until the socket is quiet for `quiet_s` (or closed)."""
    out: list[Any] = []
    try:
        while True:
            out.append(json.loads(await asyncio.wait_for(ws.recv(), quiet_s)))
    except (TimeoutError, websockets.ConnectionClosed):
        pass
    return out


def request(rid: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def dispatch(channel: str, seq: int, action: dict[str, Any] | None) -> str:
    params: dict[str, Any] = {"channel": channel, "clientSeq": seq}
    if action is not None:
        params["action"] = action
    return json.dumps({"jsonrpc": "2.0", "method": "dispatchAction", "params": params})


def initialize(client_id: str) -> str:
    return request(
        1,
        "initialize",
        {
            "channel": ROOT,
            "protocolVersions": ["0.7.0"],
            "clientId": client_id,
            "initialSubscriptions": [ROOT],
        },
    )


async def main(url: str) -> None:
    session = "ahp-session:/spot-1"
    a = await websockets.connect(url)
    await a.send(initialize("A"))
    await drain(a)
    await a.send(request(2, "createSession", {"channel": session}))
    await a.send(request(3, "subscribe", {"channel": session}))
    await drain(a)
    b = await websockets.connect(url)
    await b.send(initialize("B"))
    await drain(b)

    await a.send(dispatch(session, 1, {"type": "session/titleChanged", "title": "T2"}))
    print("D9/D10a  A (the dispatcher) got:", await drain(a))
    print("D9/D10a  B got:", await drain(b))
    await a.send(request(4, "subscribe", {"channel": session}))
    snapshot = (await drain(a))[0]["result"]["snapshot"]["state"]
    print("D11      title after the accepted titleChanged:", snapshot["title"])

    await b.send(
        dispatch(
            "ahp-chat:/does-not-exist",
            1,
            {"type": "chat/turnCancelled", "turnId": "t", "duration": 0},
        )
    )
    print("D7/D8    B got:", await drain(b))

    await b.send(dispatch("ahp-chat:/x", 2, None))
    await drain(b, 1.0)
    try:
        await b.send(request(9, "listSessions", {"channel": ROOT}))
        print("D5       after a dispatch without action, listSessions got:", await drain(b, 1.0))
    except websockets.ConnectionClosed as e:
        print("D5       after a dispatch without action the connection is gone:", e)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].startswith("ws://127.0.0.1:"):
        sys.exit("usage: spot_check.py ws://127.0.0.1:PORT")
    asyncio.run(main(sys.argv[1]))
