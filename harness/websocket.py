"""One WebSocket connection on an asyncio transport, driven through websockets' Sans-I/O layer.

`Link` is an `asyncio.Protocol`: the bytes a socket receives go into a `websockets` protocol
object (`ClientProtocol` or `ServerProtocol`: the opening handshake, framing, masking, UTF-8,
size limits, the closing handshake and ping/pong are the library's), whole messages come out of
it to `on_message` *synchronously*, and what it has to send is written to the transport at once.
Both ends of a live run use it: the embedded host (`harness.host.server`) and every client
connection (`harness.targets.live.WireConnection`).

Why not `websockets.asyncio`: its connection hands every frame through a message queue to a
reader task and every send through an async context manager, a task wake-up or two per frame on
each side. A live step is ~17 frames; on loopback with host and clients on one loop that hop was
most of a frame's cost (bench/results/live.md: a request/answer round trip 121–196 µs of CPU
there, ~59 µs here, same library, same frames on the wire).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from typing import Any

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

#: How long a closing handshake may take before the TCP connection is aborted (websockets' default).
CLOSE_TIMEOUT_S = 10.0
#: Close code of a connection that went away without a closing handshake (RFC 6455 §7.1.5).
ABNORMAL = 1006

Message = str | bytes


class LinkClosed(Exception):
    """A send on a connection that is no longer open."""


class Link(asyncio.Protocol):
    """One WebSocket connection (either side); see the module docstring.

    `on_message(text_or_bytes)` runs for every complete data message, `on_open()` once the
    opening handshake succeeded, `on_closed()` once the TCP connection is gone. A server side
    answers the handshake with the protocol's own `accept`.
    """

    def __init__(self, ws: ClientProtocol | ServerProtocol, *, close_timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        self.ws = ws
        self.transport: asyncio.Transport | None = None
        self.close_timeout_s = close_timeout_s
        self.on_message: Callable[[Message], None] = lambda m: None
        self.on_open: Callable[[], None] = lambda: None
        self.on_closed: Callable[[], None] = lambda: None
        self.handshake_error: BaseException | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._parts: list[bytes] = []
        self._text = False
        self._paused = False
        self._drained: list[asyncio.Future[None]] = []
        self._abort_timer: asyncio.TimerHandle | None = None

    # -- what the owner calls ----------------------------------------------------------------

    @property
    def close_code(self) -> int | None:
        """The close code received (1006 when the connection went away without one); None
        while the connection is up."""
        if not self.lost.done():
            return None
        return self.ws.close_code if self.ws.close_code is not None else ABNORMAL

    def send_text(self, text: str, *, flush: bool = True) -> None:
        """Send one text frame; `flush=False` keeps it (and any other held ones) for the next
        `flush()`, so that frames sent together go out in one write (one system call on the
        sender, often one read on the peer)."""
        try:
            self.ws.send_text(text.encode("utf-8"))
        except InvalidState as e:
            raise LinkClosed(f"connection {self.ws.state.name.lower()}") from e
        if flush:
            self._flush()

    def flush(self) -> None:
        """Write every frame held back by `send_text(flush=False)`."""
        self._flush()

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Start the closing handshake (nothing when it started already); the TCP connection is
        aborted if it is not over within `close_timeout_s`."""
        if self.ws.state is State.OPEN:
            self.ws.send_close(code, reason)
            self._flush()
        elif self.ws.state is State.CONNECTING and self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    async def drain(self) -> None:
        """Wait while the transport's write buffer is above its high-water mark."""
        if self._paused and not self.lost.done():
            fut = asyncio.get_running_loop().create_future()
            self._drained.append(fut)
            await fut

    async def wait_closed(self) -> None:
        await asyncio.shield(self.lost)

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if isinstance(self.ws, ClientProtocol):
            self.ws.send_request(self.ws.connect())
            self._flush()

    def data_received(self, data: bytes) -> None:
        self.ws.receive_data(data)
        self._events()

    def eof_received(self) -> bool | None:
        self.ws.receive_eof()
        self._events()
        return None  # the transport closes itself: WebSocket never writes after the peer's EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.ws.receive_eof()  # idempotent: the protocol's state is CLOSED from here on
        if self._abort_timer is not None:
            self._abort_timer.cancel()
        if not self.opened.done():
            self.opened.set_exception(self.handshake_error or ConnectionError(
                f"connection closed during the opening handshake{f': {exc}' if exc else ''}"))
            self.opened.exception()  # retrieved: an owner that gave up must not log it
        for fut in self._drained:
            if not fut.done():
                fut.set_result(None)
        self._drained.clear()
        self.lost.set_result(None)
        self.on_closed()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        for fut in self._drained:
            if not fut.done():
                fut.set_result(None)
        self._drained.clear()

    # -- inside ------------------------------------------------------------------------------

    def _events(self) -> None:
        ws = self.ws
        for event in ws.events_received():
            if isinstance(event, Frame):
                self._frame(event)
            elif isinstance(event, Request):  # server side: the client's opening handshake
                assert isinstance(ws, ServerProtocol)
                response = ws.accept(event)
                ws.send_response(response)
                if response.status_code == 101:
                    self._opened()
            elif isinstance(event, Response):  # client side: the host's answer to ours
                if ws.handshake_exc is None:
                    self._opened()
                else:
                    self.handshake_error = ws.handshake_exc
        self._flush()

    def _opened(self) -> None:
        if not self.opened.done():
            self.opened.set_result(None)
        self.on_open()

    def _frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.TEXT or frame.opcode is Opcode.BINARY:
            self._text = frame.opcode is Opcode.TEXT
            if frame.fin:
                self._message(bytes(frame.data))
            else:
                self._parts = [bytes(frame.data)]
        elif frame.opcode is Opcode.CONT:
            self._parts.append(bytes(frame.data))
            if frame.fin:
                data, self._parts = b"".join(self._parts), []
                self._message(data)

    def _message(self, data: bytes) -> None:
        if not self._text:
            self.on_message(data)
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            self.ws.fail(1007, f"{e.reason} at position {e.start}")
            return
        self.on_message(text)

    def _flush(self) -> None:
        transport = self.transport
        if transport is None:
            return
        out = self.ws.data_to_send()
        if len(out) > 1 and all(out):
            transport.write(b"".join(out))  # frames sent together: one write
            out = []
        for data in out:
            if data:
                transport.write(data)
            elif transport.can_write_eof():  # the protocol's end of stream: half-close
                with contextlib.suppress(OSError, RuntimeError):
                    transport.write_eof()
            else:
                transport.close()
        if self.ws.close_expected() and self._abort_timer is None and not self.lost.done():
            self._abort_timer = asyncio.get_running_loop().call_later(self.close_timeout_s, transport.abort)


async def connect(url: str, *, max_size: int | None, timeout_s: float,
                  close_timeout_s: float = CLOSE_TIMEOUT_S) -> Link:
    """Open a client `Link` to `url` (ws:// or wss://); raises OSError / TimeoutError, or the
    handshake's error (websockets' `InvalidStatus`, `InvalidMessage`, …)."""
    uri = parse_uri(url)
    loop = asyncio.get_running_loop()
    context: Any = ssl.create_default_context() if uri.secure else None

    def make() -> Link:
        return Link(ClientProtocol(uri, max_size=max_size, logger=_log), close_timeout_s=close_timeout_s)

    async with asyncio.timeout(timeout_s):
        _, link = await loop.create_connection(make, uri.host, uri.port, ssl=context,
                                               server_hostname=uri.host if context else None)
        try:
            await asyncio.shield(link.opened)
        except BaseException:
            link.abort()
            raise
    return link


def server_protocol(max_size: int | None, logger: logging.Logger | logging.LoggerAdapter[Any]) -> ServerProtocol:
    return ServerProtocol(max_size=max_size, logger=logger)


_log = logging.getLogger("harness.websocket")
