"""`harness.websocket.Link`, the Sans-I/O connection both ends of a live run use, against
websockets' own asyncio implementation on the other end (an independent client and server):
whole messages from fragments, the close codes the old asyncio connections gave (1007 for text
that is not UTF-8, 1001 when the host goes away), failed opening handshakes as clear errors, a
peer's WebSocket ping answered, and a closing handshake the peer never finishes cut short."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

from harness.host import HostConfig, serve_host
from harness.targets.live import ConnectionLost, Transcript, WireConnection

pytestmark = pytest.mark.live

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"channel": "ahp-root://", "protocolVersions": ["0.7.0"], "clientId": "c1",
                   "initialSubscriptions": []}}


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_fragmented_message_reaches_the_host_as_one_frame() -> None:
    async def go() -> None:
        async with await serve_host(HostConfig()) as server, connect(server.url, compression=None) as ws:
            text = json.dumps(INIT)
            await ws.send([text[:10], text[10:30], text[30:]])  # three frames: TEXT, CONT, CONT
            reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "0.7.0"

    run(go)


def test_text_that_is_not_utf8_closes_1007() -> None:
    async def go() -> None:
        async with await serve_host(HostConfig()) as server, connect(server.url, compression=None) as ws:
            ws.protocol.send_frame(Frame(Opcode.TEXT, b'{"a":"\xff"}'))
            ws.send_data()
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1007

    run(go)


def test_closing_the_host_closes_its_connections_1001_and_the_host_forgets_them() -> None:
    async def go() -> None:
        server = await serve_host(HostConfig())
        async with connect(server.url, compression=None) as ws:
            await ws.send(json.dumps(INIT))
            await asyncio.wait_for(ws.recv(), 5)
            assert len(server.host.connections) == 1
            await asyncio.wait_for(server.aclose(), 10)
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1001
        assert server.host.connections == set()

    run(go)


def test_a_refused_opening_handshake_is_a_clear_connection_error() -> None:
    async def refuse(conn: ServerConnection, request: Any) -> Any:
        return conn.respond(403, "no\n")

    async def go() -> None:
        async with serve(lambda ws: ws.wait_closed(), "127.0.0.1", 0, process_request=refuse) as srv:
            port = next(iter(srv.sockets)).getsockname()[1]
            conn = WireConnection(0, Transcript(), lambda *a: None)
            with pytest.raises(ConnectionLost, match=r"InvalidStatus.*403"):
                await conn.open(f"ws://127.0.0.1:{port}/", timeout_s=5)

    run(go)


def test_the_client_answers_a_host_ping_frame_and_a_host_request() -> None:
    got: list[Any] = []

    async def host(ws: ServerConnection) -> None:
        pong = await ws.ping(b"p1")
        await asyncio.wait_for(pong, 5)  # answered by the client's protocol: no frame of ours
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "resourceRead", "params": {}}))
        got.append(json.loads(await ws.recv()))

    async def go() -> None:
        async with serve(host, "127.0.0.1", 0, compression=None) as srv:
            port = next(iter(srv.sockets)).getsockname()[1]
            conn = WireConnection(0, Transcript(), lambda *a: None)
            await conn.open(f"ws://127.0.0.1:{port}/", timeout_s=5)
            await asyncio.wait_for(conn.closed.wait(), 10)  # the handler returned: closed 1000
            assert conn.close_code == 1000

    run(go)
    assert got and got[0]["id"] == 7 and got[0]["error"]["code"] == -32601


def test_a_host_that_never_finishes_the_closing_handshake_is_dropped() -> None:
    async def go() -> None:
        # a raw TCP peer: answers the opening handshake, then reads and ignores everything
        async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                       if line.lower().startswith(b"sec-websocket-key:"))
            from websockets.utils import accept_key

            writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: " + accept_key(key.decode()).encode() + b"\r\n\r\n")
            while await reader.read(4096):
                pass

        srv = await asyncio.start_server(peer, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        conn = WireConnection(0, Transcript(), lambda *a: None)
        await conn.open(f"ws://127.0.0.1:{port}/", timeout_s=5)
        await conn.close()  # the close frame gets no answer: dropped after its 2 s
        assert conn.closed.is_set() and conn.close_code == 1006
        srv.close()

    run(go)


def test_frames_the_host_emits_outside_a_frame_are_written_at_once_and_held_ones_in_order() -> None:
    """What one inbound frame makes the host send is held and written together (`_Cork`); what
    it emits between frames (here: `RunningHost.call`) must not wait for the next inbound frame."""
    from harness.host import start_host

    session = "ahp-session:/s1"
    with start_host() as h:

        async def go() -> None:
            async with connect(h.url, compression=None) as ws:
                await ws.send(json.dumps(INIT))
                await asyncio.wait_for(ws.recv(), 5)
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "createSession", "params": {
                    "channel": session, "workingDirectories": ["file:///a"]}}))
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "subscribe",
                                          "params": {"channel": session}}))
                ids = []
                while 3 not in ids:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    ids.append(msg.get("id"))
                assert ids.index(2) < ids.index(3)  # answers in request order
                await asyncio.get_running_loop().run_in_executor(None, lambda: h.call(
                    lambda host: host.apply_server(session, {"type": "session/titleChanged", "title": "from outside"})))
                while True:  # arrives with no further frame of ours
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    action = msg.get("params", {}).get("action", {})
                    if action.get("type") == "session/titleChanged":
                        assert action["title"] == "from outside"
                        return

        run(go)
