"""One request/answer round trip over loopback WebSocket, CPU per round trip: websockets' asyncio
connections on both ends (what the live run used before issue 25's wire change) against
`harness.websocket.Link` on both ends (websockets' Sans-I/O protocol; what it uses now).

Both ends live on one event loop in this process, as in a live run against `host:embedded`; the
server answers every frame with a small JSON-RPC result. The two are measured in turn, `--rounds`
times, each round `--trips` round trips (this machine is shared: compare within one run).

    .venv/bin/python bench/bench_wire.py --trips 20000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.websocket import Link, server_protocol  # noqa: E402
from harness.websocket import connect as link_connect  # noqa: E402

_log = logging.getLogger("bench.wire")


def _answer(text: str | bytes) -> str:
    msg = json.loads(text)
    return json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}, separators=(",", ":"))


def _request(i: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping", "params": {}}, separators=(",", ":"))


async def with_asyncio_connections(trips: int) -> float:
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import ServerConnection, serve

    async def handler(ws: ServerConnection) -> None:  # as the host was: a writer task and a queue
        queue: asyncio.Queue[str] = asyncio.Queue()

        async def write() -> None:
            while True:
                await ws.send(await queue.get())

        writer = asyncio.create_task(write())
        try:
            async for frame in ws:
                queue.put_nowait(_answer(frame))
        finally:
            writer.cancel()

    async with serve(handler, "127.0.0.1", 0, compression=None, ping_interval=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}/", compression=None, ping_interval=None) as ws:
            waiting: dict[int, asyncio.Future[Any]] = {}

            async def read() -> None:  # as the client was: a reader task
                async for frame in ws:
                    waiting.pop(json.loads(frame)["id"]).set_result(None)

            reader = asyncio.create_task(read())
            t0 = time.process_time()
            for i in range(trips):
                fut = asyncio.get_running_loop().create_future()
                waiting[i] = fut
                await ws.send(_request(i))
                async with asyncio.timeout(5):
                    await fut
            cpu = time.process_time() - t0
            reader.cancel()
    return cpu


async def with_links(trips: int) -> float:
    loop = asyncio.get_running_loop()

    def make() -> Link:
        link = Link(server_protocol(2**20, _log))
        link.on_message = lambda frame: link.send_text(_answer(frame))
        return link

    server = await loop.create_server(make, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = await link_connect(f"ws://127.0.0.1:{port}/", max_size=2**20, timeout_s=5)
    waiting: dict[int, asyncio.Future[Any]] = {}
    client.on_message = lambda frame: waiting.pop(json.loads(frame)["id"]).set_result(None)
    t0 = time.process_time()
    for i in range(trips):
        fut = loop.create_future()
        waiting[i] = fut
        client.send_text(_request(i))
        async with asyncio.timeout(5):
            await fut
    cpu = time.process_time() - t0
    client.close()
    await client.wait_closed()
    server.close()
    return cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trips", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    totals = {"websockets asyncio connections": 0.0, "harness.websocket.Link": 0.0}
    for r in range(args.rounds):
        order = list(totals) if r % 2 == 0 else list(totals)[::-1]
        for name in order:
            fn = with_asyncio_connections if name.startswith("websockets") else with_links
            cpu = asyncio.run(fn(args.trips))
            totals[name] += cpu
            print(f"round {r + 1} {name}: {1e6 * cpu / args.trips:.1f} µs CPU per round trip", flush=True)
    print("\n| both ends | CPU µs per round trip |\n|---|---:|")
    for name, cpu in totals.items():
        print(f"| {name} | {1e6 * cpu / (args.trips * args.rounds):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
