"""What the live test modules share: a live run's usual start (clients connected, one session
created by client 0 and subscribed by every client), and a crafted WebSocket host served on
loopback from a thread of its own (`served`)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from harness.live.client import DEFAULT_CLIENTS
from harness.live.run import LiveRun


def setup_session(run: LiveRun, n: int = 2, dirs: list[str] | None = None) -> str:
    """Connect the first `n` default clients, create a session (with `dirs` when given) and
    subscribe every client to it; every op must pass the live checks. Returns the session URI."""
    for i, spec in enumerate(DEFAULT_CLIENTS[:n]):
        assert run.apply(spec.op(i)) == []
    s = f"ahp-session:/fz-{run.token}-s1"
    params: dict[str, Any] = {"channel": s, "provider": run.provider()}
    if dirs is not None:
        params["workingDirectories"] = dirs
    assert run.apply({"op": "command", "client": 0, "method": "createSession", "params": params}) == []
    for i in range(n):
        assert run.apply({"op": "subscribe", "client": i, "channel": s}) == []
    return s


@contextlib.contextmanager
def served(handler: Callable[[Any], Awaitable[None]], path: str = "") -> Iterator[str]:
    """A WebSocket server on 127.0.0.1 (a free port) running `handler` per connection on a thread
    of its own, for the `with` block: yields its `ws://` URL (`path` appended), stopped after."""
    from websockets.asyncio.server import serve

    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        box["loop"], box["stop"] = asyncio.get_running_loop(), asyncio.Event()
        async with serve(handler, "127.0.0.1", 0) as server:
            box["url"] = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}{path}"
            ready.set()
            await box["stop"].wait()

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield box["url"]
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(10)
