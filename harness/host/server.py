"""The host on a real WebSocket: `serve_host` in a running event loop, `start_host` on a thread.

The server always binds 127.0.0.1 (there is no parameter to change it). Each connection is a
`harness.websocket.Link` (websockets' Sans-I/O protocol on the socket): every whole message goes
to `Host.handle_frame` as it arrives, and every frame the host emits is written to the socket as
it is emitted — the host never awaits while handling a frame, and no frame waits in a queue or
for a task. Frames larger than `max_message_bytes` close the connection with 1009 (message too
big), done by the `websockets` library.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TypeVar

from harness.reference.codec import WireDecodeError, decode
from harness.websocket import Link, LinkClosed, server_protocol

from . import jsonrpc as rpc
from .clock import Clock
from .core import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_REPLAY_BUFFER,
    DEFAULT_VERSIONS,
    Connection,
    Host,
    HostConfig,
    HostDied,
    Method,
)

LOOPBACK = "127.0.0.1"
#: Bytes written to one connection and not yet taken by its client before the host gives up on
#: it (close 1008): a client that never reads must not grow the host's memory.
MAX_UNREAD_BYTES = 64 * 2**20
CLOSE_POLICY = 1008
#: A connection handler's end (websockets' codes): normal, and the handler died (1011).
CLOSE_NORMAL = 1000
CLOSE_HANDLER_FAILED = 1011
T = TypeVar("T")

_ws_log = logging.getLogger("harness.host.websocket")

_INTERNAL_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}'


def _not_json(frame: str | bytes) -> bool:
    try:
        decode(frame.decode("utf-8") if isinstance(frame, bytes) else frame)
    except (UnicodeDecodeError, WireDecodeError, ValueError):
        return True
    return False


def _refused(frame: str | bytes) -> bool:
    """A frame the JSON-RPC layer answers with an error (not JSON, not a request object)."""
    parsed = rpc.classify(frame)
    return isinstance(parsed, rpc.Reject) and parsed.answer is not None


class HostServer:
    """A host serving in the current event loop. `async with await serve_host(...) as s:`."""

    def __init__(self, host: Host, server: asyncio.Server, links: set[Link]):
        self.host = host
        self._server = server
        self._links = links
        sock = server.sockets[0]
        self.port: int = sock.getsockname()[1]
        self.url = f"ws://{LOOPBACK}:{self.port}/"

    def stop_listening(self) -> None:
        self._server.close()

    async def aclose(self) -> None:
        """Stop listening, close every open connection (1001, going away) and wait for them."""
        self._server.close()
        links = list(self._links)
        for link in links:
            link.close(1001)
        if links:
            await asyncio.gather(*(link.wait_closed() for link in links))
        await self._server.wait_closed()

    async def __aenter__(self) -> HostServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


#: WebSocket close code of every connection when the in-process host dies (internal error).
CLOSE_DIED = 1011


class _Cork:
    """Frames the host emits while it handles one inbound frame are held per connection and
    written when it is done (`Link.send_text(flush=False)`): what one frame makes the host send
    to one client — an answer and its envelopes, an agent's turn — goes out in one write. Frames
    emitted outside a frame's handling (a test's `RunningHost.call`) are written at once."""

    def __init__(self) -> None:
        self.depth = 0
        self.held: set[Link] = set()

    def release(self) -> None:
        held, self.held = self.held, set()
        for link in held:
            link.flush()


class _Served:
    """One connection's handler: the host's `Connection` on one `Link`."""

    def __init__(self, host: Host, link: Link, die: Callable[[str], None], links: set[Link],
                 cork: _Cork) -> None:
        self.host = host
        self.link = link
        self.die = die
        self.links = links
        self.cork = cork
        self.conn: Connection | None = None
        self.done = False
        link.on_open = self.opened
        link.on_message = self.frame
        link.on_closed = self.closed

    def opened(self) -> None:
        self.links.add(self.link)
        self.conn = self.host.connect(self.deliver, self.link.close)

    def deliver(self, text: str) -> None:
        link = self.link
        if link.transport is not None and link.transport.get_write_buffer_size() > MAX_UNREAD_BYTES:
            link.close(CLOSE_POLICY, "too many unread frames")
            return
        held = self.cork.depth > 0
        with contextlib.suppress(LinkClosed):  # closing: what the host emits now reaches nobody
            link.send_text(text, flush=not held)
            if held:
                self.cork.held.add(link)

    def frame(self, frame: str | bytes) -> None:
        host, conn = self.host, self.conn
        if conn is None or self.done:
            return
        if host.defects.has("crash-on-invalid-json") and _not_json(frame):
            _ws_log.error("connection handler failed: injected defect: crash on a frame that is not JSON")
            self.finish(CLOSE_HANDLER_FAILED)
            return
        if host.defects.has("no-frame-catch") and _refused(frame):  # issue 33
            _ws_log.error("connection handler failed: injected defect: no per-frame catch")
            self.finish(CLOSE_HANDLER_FAILED)
            return
        if host.dead is not None:
            self.finish(CLOSE_NORMAL)
            return
        cork = self.cork
        cork.depth += 1
        try:
            host.handle_frame(conn, frame)
        except HostDied as e:
            self.die(str(e))
            self.finish(CLOSE_NORMAL)
        except Exception:  # a host bug must not take the connection down with it
            _ws_log.exception("frame handling failed")
            self.deliver(_INTERNAL_ERROR)
        finally:
            cork.depth -= 1
            if cork.depth == 0:
                cork.release()

    def finish(self, code: int) -> None:
        """The handler's end: the host forgets the connection, the link closes with `code`."""
        self.done = True
        if self.conn is not None:
            self.host.disconnect(self.conn)
        self.link.close(code)

    def closed(self) -> None:
        self.links.discard(self.link)
        if self.conn is not None and not self.done:
            self.done = True
            self.host.disconnect(self.conn)


async def serve_host(config: HostConfig | None = None, *, port: int = 0,
                     on_death: Callable[[str], None] | None = None) -> HostServer:
    """Start a host on 127.0.0.1:`port` (0 = any free port) in the running loop.

    When a defect makes the host die (`HostDied`), `on_death(reason)` is called (the standalone
    `ahp-fuzz host` exits the process there); without it the host goes away in-process: every
    connection is closed (1011) and the server stops listening."""
    config = config or HostConfig()
    host = Host(config)
    holder: list[HostServer] = []
    links: set[Link] = set()
    cork = _Cork()

    def die(reason: str) -> None:
        if on_death is not None:
            on_death(reason)
        for c in list(host.connections):
            c.request_close(CLOSE_DIED, "host died")
        if holder:
            holder[0].stop_listening()  # stop listening at once: the host is gone

    def make() -> Link:
        link = Link(server_protocol(config.max_message_bytes, _ws_log))
        _Served(host, link, die, links, cork)
        return link

    server = await asyncio.get_running_loop().create_server(make, LOOPBACK, port)
    holder.append(HostServer(host, server, links))
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
