"""A minimal JSON-RPC WebSocket client for talking to any AHP host in tests and benches.

Not the live fuzz client (that is `harness.targets.live`): this one only sends requests and
notifications, collects what comes back, and keeps the bookkeeping a probe needs (ids,
`clientSeq`, received `action` envelopes). Every wait is bounded by `timeout_s`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

ROOT = "ahp-root://"


class ProbeError(Exception):
    """A JSON-RPC error answer: `.code`, `.message`, `.data`."""

    def __init__(self, error: dict[str, Any]):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")


class ProbeClient:
    def __init__(self, ws: ClientConnection, timeout_s: float):
        self.ws = ws
        self.timeout_s = timeout_s
        self.next_id = 1
        self.client_seq = 0
        self.client_id: str | None = None
        #: Every notification received, in order.
        self.notes: list[dict[str, Any]] = []
        #: Every response received, by id.
        self.responses: dict[Any, dict[str, Any]] = {}

    @classmethod
    async def open(cls, url: str, *, timeout_s: float = 5.0, max_size: int | None = 2**26) -> ProbeClient:
        ws = await asyncio.wait_for(connect(url, max_size=max_size, compression=None, ping_interval=None), timeout_s)
        return cls(ws, timeout_s)

    async def close(self) -> None:
        await self.ws.close()

    async def __aenter__(self) -> ProbeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- raw frames -------------------------------------------------------------------------

    async def send_raw(self, frame: str | bytes) -> None:
        await self.ws.send(frame)

    async def recv(self, timeout_s: float | None = None) -> dict[str, Any] | list[Any] | Any:
        """The next frame, decoded; responses and notifications are also recorded."""
        text = await asyncio.wait_for(self.ws.recv(), timeout_s or self.timeout_s)
        msg = json.loads(text)
        if isinstance(msg, dict):
            if "method" in msg and "id" not in msg:
                self.notes.append(msg)
            elif "id" in msg:
                self.responses[msg["id"]] = msg
        return msg

    async def wait_response(self, req_id: Any) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while req_id not in self.responses:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no response to request {req_id!r}")
            await self.recv(left)
        return self.responses.pop(req_id)

    # -- JSON-RPC ---------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its whole response message."""
        req_id = self.next_id
        self.next_id += 1
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params or {"channel": ROOT}}))
        return await self.wait_response(req_id)

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request; its result, or raise `ProbeError`."""
        msg = await self.request(method, params)
        if "error" in msg:
            raise ProbeError(msg["error"])
        return msg.get("result")

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    async def initialize(
        self,
        client_id: str,
        *,
        versions: tuple[str, ...] = ("0.7.0",),
        subscriptions: tuple[str, ...] = (ROOT,),
        capabilities: dict[str, Any] | None = None,
    ) -> Any:
        params: dict[str, Any] = {
            "channel": ROOT,
            "protocolVersions": list(versions),
            "clientId": client_id,
            "initialSubscriptions": list(subscriptions),
        }
        if capabilities is not None:
            params["capabilities"] = capabilities
        result = await self.call("initialize", params)
        self.client_id = client_id
        return result

    async def dispatch(self, channel: str, action: dict[str, Any]) -> int:
        """`dispatchAction` with the next `clientSeq`; returns that clientSeq."""
        self.client_seq += 1
        await self.notify("dispatchAction", {"channel": channel, "clientSeq": self.client_seq, "action": action})
        return self.client_seq

    async def settle(self) -> None:
        """A `ping` round trip: everything the host sent this connection before it has arrived."""
        await self.call("ping", {"channel": ROOT})

    async def subscribe(self, channel: str) -> dict[str, Any]:
        result = await self.call("subscribe", {"channel": channel})
        return result.get("snapshot") if isinstance(result, dict) else None

    # -- what arrived -----------------------------------------------------------------------

    def envelopes(self, channel: str | None = None) -> list[dict[str, Any]]:
        return [
            n["params"]
            for n in self.notes
            if n.get("method") == "action" and (channel is None or n["params"].get("channel") == channel)
        ]

    def echo_of(self, client_seq: int) -> dict[str, Any] | None:
        for env in self.envelopes():
            origin = env.get("origin") or {}
            if origin.get("clientId") == self.client_id and origin.get("clientSeq") == client_seq:
                return env
        return None

    # -- conveniences for scenarios ---------------------------------------------------------

    async def create_session(self, uri: str, directories: list[str] | None = None, *, subscribe: bool = True) -> str:
        """Create a session (and subscribe to it and its default chat); its default chat URI."""
        params: dict[str, Any] = {"channel": uri}
        if directories is not None:
            params["workingDirectories"] = directories
        await self.call("createSession", params)
        snap = await self.subscribe(uri)
        chat = snap["state"].get("defaultChat")
        if subscribe and chat:
            await self.subscribe(chat)
        return chat

    async def run_turn(
        self, chat: str, turn_id: str, text: str, *, attachments: list[Any] | None = None, max_steps: int = 8
    ) -> int:
        """Start a turn and answer the agent (approve tools, accept input) until it completes;
        the clientSeq of the `chat/turnStarted`. Needs a subscription to `chat`."""
        message: dict[str, Any] = {"text": text, "origin": {"kind": "user"}}
        if attachments is not None:
            message["attachments"] = attachments
        seq = await self.dispatch(
            chat,
            {"type": "chat/turnStarted", "turnId": turn_id, "startedAt": "2026-01-01T00:00:00.000Z", "message": message},
        )
        answered: set[str] = set()
        for _ in range(max_steps):
            await self.settle()
            for env in self.envelopes(chat):
                a = env["action"]
                if a.get("turnId") == turn_id and a["type"] in ("chat/turnComplete", "chat/turnCancelled", "chat/error"):
                    return seq
                if a["type"] == "chat/toolCallReady" and a.get("turnId") == turn_id and a["toolCallId"] not in answered:
                    answered.add(a["toolCallId"])
                    await self.dispatch(
                        chat,
                        {"type": "chat/toolCallConfirmed", "turnId": turn_id, "toolCallId": a["toolCallId"], "approved": True, "confirmed": "user-action"},
                    )
                request = a.get("request") if a["type"] == "chat/inputRequested" else None
                if isinstance(request, dict) and request.get("id", "").startswith(turn_id) and request["id"] not in answered:
                    answered.add(request["id"])
                    answers = {
                        q["id"]: {"state": "answered", "value": {"kind": "boolean", "value": True}}
                        for q in request.get("questions") or []
                    }
                    await self.dispatch(
                        chat, {"type": "chat/inputCompleted", "requestId": request["id"], "response": "accept", "answers": answers}
                    )
        raise TimeoutError(f"turn {turn_id} did not complete")
