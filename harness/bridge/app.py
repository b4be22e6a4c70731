"""The bridge: an ASGI app that forwards `POST /rpc/{method}` to a live host over one WebSocket.

`HostLink` is one initialised JSON-RPC connection to the host, on an event loop of its own
(a background thread), so it can be called from any thread or loop — schemathesis runs ASGI
apps on its own loop. `BridgeApp` is a plain ASGI 3 callable (no web framework):

* `GET /openapi.json` — the OpenAPI document the app was built with;
* `POST /rpc/<method>` — the JSON body is sent as the request's `params`; a `result` answers
  200 with the result as the body; an `error` answers `openapi.status_of(code)` with the
  JSON-RPC error object as the body; a lost connection 502 and a timeout 504 (code -32603,
  header `x-ahp-bridge: transport`);
* a destructive command the fixture's fence refuses is not sent: 403 with header
  `x-ahp-bridge: fenced` (the run ignores such answers; see fixture.py).

Every forwarded exchange is appended to `exchanges` (method, params, reply), which the run
reads to build findings.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.targets.live import ConnectionLost, RpcError, Transcript, WireConnection

from .openapi import TIMEOUT_STATUS, TRANSPORT_STATUS, status_of

ROOT = "ahp-root://"
BRIDGE_HEADER = "x-ahp-bridge"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Reply:
    """What the host answered: a result, an error object, or a transport failure."""

    result: Any = None
    error: dict[str, Any] | None = None
    #: "lost" | "timeout" | "budget" (not sent, or cut short, because the run's budget is spent;
    #: never judged) | "fenced", with `error` describing it
    transport: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.transport is None

    def to_json(self) -> dict[str, Any]:
        if self.transport is not None:
            return {"transport": self.transport, "error": self.error}
        if self.error is not None:
            return {"error": self.error}
        return {"result": self.result}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        return cls(result=data.get("result"), error=data.get("error"), transport=data.get("transport"))


class HostLink:
    """One initialised JSON-RPC connection to `url` on a private event-loop thread."""

    def __init__(self, url: str, *, versions: tuple[str, ...] = ("0.7.0",), client_id: str = "ahp-fuzz-bridge",
                 timeout_s: float = 5.0) -> None:
        self.url = url
        self.versions = versions
        self.client_id = client_id
        self.timeout_s = timeout_s
        #: The run's time left in seconds (None: no limit), asked before every call: no call is
        #: sent once it is spent, and none waits past it (`Reply.transport == "budget"`).
        self.time_left: Callable[[], float | None] = lambda: None
        self.transcript = Transcript(limit=0)
        self.initialize_result: dict[str, Any] = {}
        self.reconnects = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ahp-bridge-link", daemon=True)
        self._thread.start()
        self._conn: WireConnection | None = None
        self._ids = itertools.count(1)

    # -- lifecycle -----------------------------------------------------------------------

    def open(self) -> dict[str, Any]:
        """Connect and `initialize`; returns the initialize result (raises ConnectionLost/RpcError)."""
        return self._run(self._open())

    async def _open(self) -> dict[str, Any]:
        conn = WireConnection(next(self._ids), self.transcript, lambda *_: None)
        await conn.open(self.url, self.timeout_s)
        result = await conn.request(
            "initialize",
            {"channel": ROOT, "protocolVersions": list(self.versions), "clientId": self.client_id,
             "clientInfo": {"name": "ahp-fuzz-bridge", "version": "0.1.0"}, "initialSubscriptions": [ROOT]},
            self.timeout_s,
        )
        self._conn = conn
        self.initialize_result = result if isinstance(result, dict) else {}
        return self.initialize_result

    def close(self) -> None:
        if self._loop.is_closed():
            return
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._run(self._conn.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(self.timeout_s * 3 + 5)

    # -- calls ---------------------------------------------------------------------------

    def root_state(self) -> dict[str, Any]:
        for snap in self.initialize_result.get("snapshots") or []:
            if isinstance(snap, dict) and snap.get("resource") == ROOT and isinstance(snap.get("state"), dict):
                return snap["state"]
        return {}

    def capability(self, name: str) -> bool:
        """True when any agent of the root state advertises `capabilities.<name>`."""
        agents = self.root_state().get("agents") or []
        return any(isinstance(a, dict) and isinstance((a.get("capabilities") or {}), dict)
                   and name in (a.get("capabilities") or {}) for a in agents)

    def call(self, method: str, params: Any) -> Reply:
        """Send one request (from any thread that is not the link's) and wait for its reply."""
        return self._run(self._bounded(method, params))

    async def acall(self, method: str, params: Any) -> Reply:
        """The same from another event loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._bounded(method, params), self._loop))

    async def _bounded(self, method: str, params: Any) -> Reply:
        """`_call` within the run's budget: not sent once it is spent, never waiting past it."""
        left = self.time_left()
        if left is None or left >= self.timeout_s:
            return await self._call(method, params, self.timeout_s)
        if left <= 0:
            return Reply(error={"code": -32603, "message": "bridge: the run's budget is spent"}, transport="budget")
        reply = await self._call(method, params, left)
        if reply.transport == "timeout":  # cut short by the budget: not the host's fault
            return Reply(error={"code": -32603, "message": "bridge: the run's budget is spent"}, transport="budget")
        return reply

    async def _call(self, method: str, params: Any, timeout_s: float | None = None) -> Reply:
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        if self._conn is None or self._conn.closed.is_set():
            try:
                self.reconnects += 1
                await self._open()
            except Exception as e:
                return Reply(error={"code": -32603, "message": f"bridge: cannot reach the host: {e}"}, transport="lost")
        assert self._conn is not None
        try:
            result = await self._conn.request(method, params, timeout_s)
        except RpcError as e:
            err: dict[str, Any] = {"code": e.code, "message": e.message}
            if e.data is not None:
                err["data"] = e.data
            return Reply(error=err)
        except ConnectionLost as e:
            return Reply(error={"code": -32603, "message": f"bridge: connection lost: {e}"}, transport="lost")
        except TimeoutError:
            return Reply(error={"code": -32603, "message": f"bridge: no answer within {timeout_s:g}s"},
                         transport="timeout")
        return Reply(result=result)


@dataclass
class Exchange:
    method: str
    params: Any
    reply: Reply
    fenced: str | None = None


@dataclass
class BridgeApp:
    """The ASGI app (see the module docstring)."""

    link: HostLink
    document: dict[str, Any]
    fence: Callable[[str, Any], str | None] = lambda method, params: None
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.methods = {path.rsplit("/", 1)[-1] for path in self.document.get("paths", {})}
        self._doc_bytes = json.dumps(self.document).encode()
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path: str = scope.get("path", "")
        verb: str = scope.get("method", "GET")
        if path == "/openapi.json" and verb in ("GET", "HEAD"):
            await _respond(send, 200, self._doc_bytes)
            return
        method = path[len("/rpc/") :] if path.startswith("/rpc/") else None
        if method is None or method not in self.methods:
            await _respond_json(send, 404, {"code": -32601, "message": f"bridge: no route {path}"}, "no-route")
            return
        if verb != "POST":
            await _respond_json(send, 405, {"code": -32600, "message": "bridge: use POST"}, "method")
            return
        body = await _read_body(receive)
        try:
            params = json.loads(body) if body else None
        except ValueError:
            await _respond_json(send, 400, {"code": -32700, "message": "bridge: the body is not JSON"}, "bad-body")
            return
        why = self.fence(method, params)
        if why is not None:
            self._record(Exchange(method, params, Reply(error={"code": -32009, "message": why}), fenced=why))
            await _respond_json(send, 403, {"code": -32009, "message": f"fenced by ahp-fuzz: {why}"}, "fenced")
            return
        reply = await self.link.acall(method, params)
        self._record(Exchange(method, params, reply))
        if reply.transport is not None:
            status = TIMEOUT_STATUS if reply.transport == "timeout" else TRANSPORT_STATUS
            await _respond_json(send, status, reply.error, "transport")
        elif reply.error is not None:
            await _respond_json(send, status_of(reply.error.get("code")), reply.error)
        else:
            await _respond_json(send, 200, reply.result)

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _respond_json(send: Send, status: int, value: Any, bridge: str | None = None) -> None:
    await _respond(send, status, json.dumps(value).encode(), bridge)


async def _respond(send: Send, status: int, body: bytes, bridge: str | None = None) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if bridge is not None:
        headers.append((BRIDGE_HEADER.encode(), bridge.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
