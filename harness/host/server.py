"""The host on a real WebSocket: `serve_host` in a running event loop, `start_host` on a thread.

The server always binds 127.0.0.1 (there is no parameter to change it). Each connection gets a
reader (frames → `Host.handle_frame`) and a writer task draining that connection's queue, so the
host never awaits while handling a frame. Frames larger than `max_message_bytes` close the
connection with 1009 (message too big), done by the `websockets` library.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from harness.reference.codec import WireDecodeError, decode

from .clock import Clock
from .core import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_REPLAY_BUFFER,
    DEFAULT_VERSIONS,
    Host,
    HostConfig,
    HostDied,
    Method,
)

LOOPBACK = "127.0.0.1"
#: Frames queued for one connection before the host gives up on it (close 1008).
MAX_PENDING_FRAMES = 100_000
CLOSE_POLICY = 1008
T = TypeVar("T")

_ws_log = logging.getLogger("harness.host.websocket")


@dataclass(frozen=True, slots=True)
class _Close:
    code: int
    reason: str


_INTERNAL_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}'


class InjectedCrash(RuntimeError):
    """The `crash-on-invalid-json` defect: the connection handler dies."""


def _not_json(frame: str | bytes) -> bool:
    try:
        decode(frame.decode("utf-8") if isinstance(frame, bytes) else frame)
    except (UnicodeDecodeError, WireDecodeError, ValueError):
        return True
    return False


async def _write(ws: ServerConnection, queue: asyncio.Queue[str | _Close]) -> None:
    with contextlib.suppress(ConnectionClosed):
        while True:
            item = await queue.get()
            if isinstance(item, _Close):
                await ws.close(item.code, item.reason)
                return
            await ws.send(item)


class HostServer:
    """A host serving in the current event loop. `async with await serve_host(...) as s:`."""

    def __init__(self, host: Host, server: Server):
        self.host = host
        self._server = server
        sock = next(iter(server.sockets))
        self.port: int = sock.getsockname()[1]
        self.url = f"ws://{LOOPBACK}:{self.port}/"

    async def aclose(self) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def __aenter__(self) -> HostServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


#: WebSocket close code of every connection when the in-process host dies (internal error).
CLOSE_DIED = 1011


async def serve_host(config: HostConfig | None = None, *, port: int = 0,
                     on_death: Callable[[str], None] | None = None) -> HostServer:
    """Start a host on 127.0.0.1:`port` (0 = any free port) in the running loop.

    When a defect makes the host die (`HostDied`), `on_death(reason)` is called (the standalone
    `ahp-fuzz host` exits the process there); without it the host goes away in-process: every
    connection is closed (1011) and the server stops listening."""
    config = config or HostConfig()
    host = Host(config)
    holder: list[HostServer] = []

    def die(reason: str) -> None:
        if on_death is not None:
            on_death(reason)
        for c in list(host.connections):
            c.request_close(CLOSE_DIED, "host died")
        if holder:
            holder[0]._server.close()  # stop listening at once: the host is gone

    async def handler(ws: ServerConnection) -> None:
        queue: asyncio.Queue[str | _Close] = asyncio.Queue()

        def deliver(text: str) -> None:
            if queue.qsize() < MAX_PENDING_FRAMES:
                queue.put_nowait(text)
            elif not slow.is_set():  # a client that never reads must not grow the host's memory
                slow.set()
                queue.put_nowait(_Close(CLOSE_POLICY, "too many unread frames"))

        slow = asyncio.Event()
        conn = host.connect(deliver, lambda code, reason: queue.put_nowait(_Close(code, reason)))
        writer = asyncio.create_task(_write(ws, queue))
        try:
            async for frame in ws:
                if host.defects.has("crash-on-invalid-json") and _not_json(frame):
                    raise InjectedCrash("injected defect: crash on a frame that is not JSON")
                if host.dead is not None:
                    break
                try:
                    host.handle_frame(conn, frame)
                except HostDied as e:
                    die(str(e))
                    break
                except Exception:  # a host bug must not take the connection down with it
                    _ws_log.exception("frame handling failed")
                    queue.put_nowait(_INTERNAL_ERROR)
        except ConnectionClosed:
            pass
        finally:
            host.disconnect(conn)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    server = await serve(
        handler,
        LOOPBACK,
        port,
        max_size=config.max_message_bytes,
        compression=None,
        ping_interval=None,
        logger=_ws_log,
    )
    holder.append(HostServer(host, server))
    return holder[0]


class RunningHost:
    """A host serving on its own event loop in a background thread (`start_host`)."""

    def __init__(self, config: HostConfig, port: int, timeout_s: float):
        self._loop = asyncio.new_event_loop()
        self._timeout = timeout_s
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._server: HostServer | None = None
        self._thread = threading.Thread(target=self._run, args=(config, port), name="ahp-host", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise TimeoutError("the embedded host did not start in time")
        if self._error is not None:
            raise self._error
        assert self._server is not None
        self.host: Host = self._server.host
        self.url: str = self._server.url
        self.port: int = self._server.port

    def _run(self, config: HostConfig, port: int) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main(config, port))
        finally:
            self._loop.close()

    async def _main(self, config: HostConfig, port: int) -> None:
        self._stop = asyncio.Event()
        try:
            self._server = await serve_host(config, port=port)
        except BaseException as e:  # reported to the starting thread
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        await self._stop.wait()
        self._server.host.close_all()
        await asyncio.sleep(0)
        await self._server.aclose()

    def call(self, fn: Callable[[Host], T]) -> T:
        """Run `fn(host)` on the host's loop (between frames) and return its result."""

        async def run() -> T:
            return fn(self.host)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(self._timeout)

    def close(self) -> None:
        if self._thread.is_alive() and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(self._timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def __enter__(self) -> RunningHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_host(
    port: int = 0,
    defects: Iterable[str] = (),
    *,
    versions: Iterable[str] = DEFAULT_VERSIONS,
    immutable_primary: bool = False,
    multiple_working_directories: bool = True,
    seed: int = 0,
    clock: Clock | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    replay_buffer: int = DEFAULT_REPLAY_BUFFER,
    extra_methods: Mapping[str, Method] | None = None,
    timeout_s: float = 10.0,
    config: HostConfig | None = None,
) -> RunningHost:
    """Start the embedded host on 127.0.0.1 in a background thread; `.url`, `.close()`.

    Raises `UnknownDefect` (a ValueError) for a defect name not in `DEFECTS`, `OSError` when the
    port cannot be bound.
    """
    cfg = replace(
        HostConfig(),
        versions=tuple(versions),
        defects=tuple(defects),
        immutable_primary=immutable_primary,
        multiple_working_directories=multiple_working_directories,
        seed=seed,
        clock=clock,
        max_message_bytes=max_message_bytes,
        replay_buffer=replay_buffer,
        extra_methods=dict(extra_methods or {}),
    ) if config is None else config
    from .defects import DefectSet

    DefectSet(cfg.defects)  # fail fast in the caller's thread
    return RunningHost(cfg, port, timeout_s)
