"""The clean embedded host over real WebSocket connections: handshake, methods, errors,
replay, projection per peer and the scripted agent's determinism."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from harness.host import RunningHost, start_host
from harness.host.probe import ROOT, ProbeClient

pytestmark = pytest.mark.live

S = "ahp-session:/s1"
DIRS = ["file:///a", "file:///b"]


@pytest.fixture
def host() -> Iterator[RunningHost]:
    with start_host() as h:
        yield h


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 20))


async def _client(url: str, client_id: str = "c1", **kw: Any) -> ProbeClient:
    c = await ProbeClient.open(url)
    await c.initialize(client_id, **kw)
    return c


def _error_code(msg: dict[str, Any]) -> int:
    assert "error" in msg, msg
    return msg["error"]["code"]


# -- handshake -------------------------------------------------------------------------------


def test_initialize_negotiates_the_first_supported_offer(host: RunningHost) -> None:
    async def go() -> None:
        async with await ProbeClient.open(host.url) as c:
            result = await c.initialize("c1", versions=("9.9.9", "0.6.0", "0.7.0"))
            assert result["protocolVersion"] == "0.6.0"
            assert result["serverSeq"] == 0
            assert [s["resource"] for s in result["snapshots"]] == [ROOT]
            assert result["snapshots"][0]["state"]["agents"][0]["provider"] == "scripted"

    run(go)


def test_unsupported_version_is_32005_with_supported_versions_then_close(host: RunningHost) -> None:
    async def go() -> None:
        async with await ProbeClient.open(host.url) as c:
            msg = await c.request("initialize", {"channel": ROOT, "protocolVersions": ["0.1.0"], "clientId": "c1"})
            assert _error_code(msg) == -32005
            assert msg["error"]["data"] == {"supportedVersions": ["0.7.0", "0.6.0"]}
            with pytest.raises(ConnectionClosed):
                await c.recv(2)

    run(go)


def test_ping_before_initialize_and_other_requests_refused(host: RunningHost) -> None:
    async def go() -> None:
        async with await ProbeClient.open(host.url) as c:
            assert await c.call("ping", {"channel": ROOT}) is None
            assert _error_code(await c.request("listSessions", {"channel": ROOT})) == -32601
            await c.initialize("c1")
            assert await c.call("listSessions", {"channel": ROOT}) == {"items": []}
            assert _error_code(await c.request("initialize", {"channel": ROOT, "protocolVersions": ["0.7.0"], "clientId": "c1"})) == -32600

    run(go)


def test_malformed_frames_get_the_documented_errors(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url) as c:
            cases: list[tuple[str | bytes, int, Any]] = [
                ("{oops", -32700, None),
                (b"\xff\xfe", -32700, None),
                ("[]", -32600, None),
                ('[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}]', -32600, None),
                ('{"jsonrpc":"1.0","id":7,"method":"ping"}', -32600, 7),
                ('{"jsonrpc":"2.0","id":8}', -32600, 8),
                ('{"jsonrpc":"2.0","id":9,"method":"noSuchMethod","params":{"channel":"ahp-root://"}}', -32601, 9),
                ('{"jsonrpc":"2.0","id":10,"method":"subscribe","params":[1]}', -32602, 10),
                ('{"jsonrpc":"2.0","id":11,"method":"subscribe","params":{}}', -32602, 11),
                ('{"jsonrpc":"2.0","id":12,"method":"listSessions","params":{"channel":"ahp-session:/x"}}', -32602, 12),
                ('{"jsonrpc":"2.0","id":"s-13","method":"subscribe","params":{"channel":"ahp-session:/none"}}', -32008, "s-13"),
                ('{"jsonrpc":"2.0","id":1e400,"method":"ping"}', -32600, None),
                ('{"jsonrpc":"2.0","id":1' + "0" * 5000 + ',"method":"ping"}', -32700, None),
                ('{"jsonrpc":"2.0","id":3,"method":"ping","a":NaN}', -32700, None),
                ('{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}', -32700, None),
                ("[" * 100_000 + "]" * 100_000, -32700, None),
            ]
            for frame, code, req_id in cases:
                await c.send_raw(frame)
                answer = await c.recv()
                assert answer["error"]["code"] == code, (frame, answer)
                assert answer["id"] == req_id, (frame, answer)
            # notifications and stray responses are never answered
            await c.send_raw('{"jsonrpc":"2.0","method":"noSuchNotification","params":{"channel":"ahp-root://"}}')
            await c.send_raw('{"jsonrpc":"2.0","id":99,"result":null}')
            await c.send_raw(json.dumps({"jsonrpc": "2.0", "id": 50, "method": "ping", "params": {"channel": ROOT}}).encode())
            assert await c.recv() == {"jsonrpc": "2.0", "id": 50, "result": None}

    run(go)


def test_oversize_frame_closes_1009_and_other_connections_are_served() -> None:
    with start_host(max_message_bytes=4096) as h:

        async def go() -> None:
            async with await _client(h.url, "big") as big, await _client(h.url, "ok") as ok:
                await big.send_raw("x" * 5000)
                with pytest.raises(ConnectionClosed) as info:
                    await big.recv(5)
                assert info.value.rcvd is not None and info.value.rcvd.code == 1009
                await ok.settle()

        run(go)


# -- sessions, chats, terminals --------------------------------------------------------------


def test_session_lifecycle_and_root_catalog(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url) as c:
            chat = await c.create_session(S, DIRS)
            assert _error_code(await c.request("createSession", {"channel": S})) == -32003
            assert _error_code(await c.request("createSession", {"channel": "ahp-session:/p", "provider": "nope"})) == -32002
            state = (await c.subscribe(S))["state"]
            assert state["lifecycle"] == "ready" and state["defaultChat"] == chat
            assert state["workingDirectories"] == DIRS
            listed = await c.call("listSessions", {"channel": ROOT})
            assert [i["resource"] for i in listed["items"]] == [S]
            assert listed["items"][0]["workingDirectories"] == DIRS
            added = [n for n in c.notes if n["method"] == "root/sessionAdded"]
            assert added and added[0]["params"]["summary"]["resource"] == S
            await c.call("disposeSession", {"channel": S})
            assert _error_code(await c.request("subscribe", {"channel": chat})) == -32008
            assert await c.call("listSessions", {"channel": ROOT}) == {"items": []}
            assert _error_code(await c.request("disposeSession", {"channel": S})) == -32001

    run(go)


def test_list_sessions_pages_and_rejects_bad_cursor(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url) as c:
            for i in range(3):
                await c.call("createSession", {"channel": f"ahp-session:/s{i}"})
            first = await c.call("listSessions", {"channel": ROOT, "limit": 2})
            assert [i["resource"] for i in first["items"]] == ["ahp-session:/s2", "ahp-session:/s1"]
            rest = await c.call("listSessions", {"channel": ROOT, "cursor": first["nextCursor"]})
            assert [i["resource"] for i in rest["items"]] == ["ahp-session:/s0"] and "nextCursor" not in rest
            assert _error_code(await c.request("listSessions", {"channel": ROOT, "cursor": "zz"})) == -32602

    run(go)


def test_create_chat_subset_rules_and_absent_vs_empty(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url) as c:
            await c.create_session(S, DIRS)
            assert _error_code(await c.request("createChat", {"channel": "ahp-session:/none", "chat": "ahp-chat:/q"})) == -32001
            bad = await c.request("createChat", {"channel": S, "chat": "ahp-chat:/q", "workingDirectories": ["file:///a/"]})
            assert _error_code(bad) == -32602
            await c.call("createChat", {"channel": S, "chat": "ahp-chat:/inherit"})
            await c.call("createChat", {"channel": S, "chat": "ahp-chat:/none", "workingDirectories": []})
            await c.call("createChat", {"channel": S, "chat": "ahp-chat:/b", "workingDirectories": ["file:///b"]})
            assert "workingDirectories" not in (await c.subscribe("ahp-chat:/inherit"))["state"]
            assert (await c.subscribe("ahp-chat:/none"))["state"]["workingDirectories"] == []
            assert (await c.subscribe("ahp-chat:/b"))["state"]["workingDirectories"] == ["file:///b"]
            catalog = {x["resource"]: x for x in (await c.subscribe(S))["state"]["chats"]}
            assert "workingDirectories" not in catalog["ahp-chat:/inherit"]
            assert catalog["ahp-chat:/none"]["workingDirectories"] == []
            # a session directory still in a chat's subset cannot be removed (no dangling subset)
            seq = await c.dispatch(S, {"type": "session/workingDirectoryRemoved", "directory": "file:///b"})
            await c.settle()
            assert "rejectionReason" in c.echo_of(seq)
            await c.call("disposeChat", {"channel": "ahp-chat:/b"})
            seq = await c.dispatch(S, {"type": "session/workingDirectoryRemoved", "directory": "file:///b"})
            await c.settle()
            assert "rejectionReason" not in c.echo_of(seq)
            assert (await c.subscribe(S))["state"]["workingDirectories"] == ["file:///a"]

    run(go)


def test_immutable_primary_is_advertised_and_enforced() -> None:
    with start_host(immutable_primary=True) as h:

        async def go() -> None:
            async with await ProbeClient.open(h.url) as c:
                result = await c.initialize("c1")
                caps = result["snapshots"][0]["state"]["agents"][0]["capabilities"]
                assert caps["multipleWorkingDirectories"] == {"immutablePrimary": True}
                await c.create_session(S, DIRS)
                seq = await c.dispatch(S, {"type": "session/workingDirectoryRemoved", "directory": "file:///a"})
                await c.settle()
                assert "rejectionReason" in c.echo_of(seq)
                assert (await c.subscribe(S))["state"]["workingDirectories"] == DIRS

        run(go)


def test_terminals(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url, "c1") as c, await _client(host.url, "c2") as other:
            t = "ahp-terminal:/t1"
            await c.call("createTerminal", {"channel": t, "claim": {"kind": "client", "clientId": "c1"}, "name": "sh"})
            assert (await c.subscribe(t))["state"]["claim"] == {"kind": "client", "clientId": "c1"}
            await other.subscribe(t)
            seq = await other.dispatch(t, {"type": "terminal/claimed", "claim": {"kind": "client", "clientId": "c2"}})
            await other.settle()
            assert "rejectionReason" in other.echo_of(seq)
            seq = await c.dispatch(t, {"type": "terminal/resized", "cols": 100, "rows": 30})
            await c.settle()
            assert "rejectionReason" not in c.echo_of(seq)
            root = (await c.subscribe(ROOT))["state"]
            assert [x["resource"] for x in root["terminals"]] == [t]
            await c.call("disposeTerminal", {"channel": t})
            assert (await c.subscribe(ROOT))["state"]["terminals"] == []
            assert _error_code(await c.request("disposeTerminal", {"channel": t})) == -32008

    run(go)


# -- actions ---------------------------------------------------------------------------------


def test_echo_rejection_and_unknown_channel(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url) as c:
            chat = await c.create_session(S, DIRS)
            seq = await c.dispatch("ahp-chat:/nowhere", {"type": "chat/draftChanged"})
            await c.settle()
            assert c.echo_of(seq) is None  # silently ignored
            seq = await c.dispatch(chat, {"type": "chat/delta", "turnId": "t", "partId": "p", "content": "x"})
            await c.settle()
            echo = c.echo_of(seq)
            assert echo["origin"] == {"clientId": "c1", "clientSeq": seq}
            assert "not client-dispatchable" in echo["rejectionReason"]
            seq = await c.dispatch(chat, {"type": "session/titleChanged", "title": "x"})
            await c.settle()
            assert "does not belong" in c.echo_of(seq)["rejectionReason"]
            seq = await c.dispatch(S, {"type": "session/titleChanged", "title": "Renamed"})
            await c.settle()
            echo = c.echo_of(seq)
            assert "rejectionReason" not in echo and echo["action"]["title"] == "Renamed"
            changed = [n for n in c.notes if n["method"] == "root/sessionSummaryChanged"]
            assert changed[-1]["params"]["changes"]["title"] == "Renamed"
            server = [e for e in c.envelopes() if e["action"]["type"] == "session/chatUpdated"]
            assert all("origin" not in e for e in server)
            seqs = [e["serverSeq"] for e in c.envelopes()]
            assert all(b > a for a, b in itertools.pairwise(seqs))

    run(go)


def test_turn_runs_tool_confirmation_and_keeps_summaries_in_sync(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url) as c:
            chat = await c.create_session(S, DIRS)
            await c.run_turn(chat, "t1", "please use a tool")
            types = [e["action"]["type"] for e in c.envelopes(chat)]
            assert "chat/toolCallReady" in types and "chat/toolCallComplete" in types
            assert types[-1] == "chat/turnComplete"
            state = (await c.subscribe(chat))["state"]
            assert [t["id"] for t in state["turns"]] == ["t1"] and state["turns"][0]["state"] == "complete"
            entry = next(x for x in (await c.subscribe(S))["state"]["chats"] if x["resource"] == chat)
            assert entry["status"] == state["status"] and entry["modifiedAt"] == state["modifiedAt"]
            seq = await c.dispatch(chat, {"type": "chat/turnCancelled", "turnId": "t1", "duration": 0})
            await c.settle()
            assert c.echo_of(seq)["rejectionReason"] == "no active turn to cancel"

    run(go)


def _turn_transcript(seed: int) -> list[Any]:
    with start_host(seed=seed) as h:

        async def go() -> list[Any]:
            async with await _client(h.url) as c:
                chat = await c.create_session(S, DIRS)
                for i in range(4):
                    await c.run_turn(chat, f"t{i}", f"message {i}")
                return [(e["serverSeq"], e["action"]) for e in c.envelopes()]

        return run(go)


def test_scripted_agent_is_deterministic() -> None:
    first = _turn_transcript(7)
    assert first == _turn_transcript(7)
    assert len(first) > 20


def test_reconnect_replays_or_sends_snapshots() -> None:
    with start_host(replay_buffer=4) as h:

        async def go() -> None:
            async with await _client(h.url) as c:
                await c.create_session(S, DIRS)
                last = (await c.subscribe(S))["fromSeq"]
                await c.dispatch(S, {"type": "session/titleChanged", "title": "one"})
                await c.settle()
            async with await ProbeClient.open(h.url) as again:
                bad = await again.request("reconnect", {"channel": ROOT, "clientId": "stranger", "lastSeenServerSeq": 0, "subscriptions": []})
                assert _error_code(bad) == -32008
                result = await again.call(
                    "reconnect", {"channel": ROOT, "clientId": "c1", "lastSeenServerSeq": last, "subscriptions": [S, "ahp-chat:/gone"]}
                )
                assert result["type"] == "replay" and result["missing"] == ["ahp-chat:/gone"]
                assert [e["action"]["title"] for e in result["actions"]] == ["one"]
                assert all(e["serverSeq"] > last for e in result["actions"])
                for i in range(5):  # push the title change out of the 4-envelope buffer
                    await again.dispatch(S, {"type": "session/titleChanged", "title": f"n{i}"})
                await again.settle()
            async with await ProbeClient.open(h.url) as third:
                result = await third.call("reconnect", {"channel": ROOT, "clientId": "c1", "lastSeenServerSeq": last, "subscriptions": [S]})
                assert result["type"] == "snapshot"
                assert result["snapshots"][0]["state"]["title"] == "n4"

        run(go)


def test_collections_kept_for_negotiating_peers_and_flattened_for_others(host: RunningHost) -> None:
    col = {
        "type": "collection",
        "label": "g",
        "_meta": {"group": 1},
        "attachments": [{"type": "simple", "label": "m1", "_meta": {"m": 1}}, {"type": "simple", "label": "m2"}],
    }

    async def go() -> None:
        async with await _client(host.url, "new", capabilities={"attachmentCollections": {}}) as new, await _client(host.url, "old") as old:
            chat = await new.create_session(S, DIRS)
            await old.subscribe(chat)
            message = {"text": "hi", "origin": {"kind": "user"}, "attachments": [col]}
            seq = await old.dispatch(chat, {"type": "chat/draftChanged", "draft": message})
            await old.settle()
            assert "not negotiated" in old.echo_of(seq)["rejectionReason"]
            empty = {**col, "attachments": []}
            seq = await new.dispatch(chat, {"type": "chat/draftChanged", "draft": {**message, "attachments": [empty]}})
            await new.settle()
            assert "at least one" in new.echo_of(seq)["rejectionReason"]
            seq = await new.dispatch(chat, {"type": "chat/draftChanged", "draft": message})
            await new.settle()
            await old.settle()
            assert new.echo_of(seq)["action"]["draft"]["attachments"] == [col]
            old_view = [e for e in old.envelopes(chat) if "rejectionReason" not in e][-1]
            assert old_view["action"]["draft"]["attachments"] == col["attachments"]
            assert (await new.subscribe(chat))["state"]["draft"]["attachments"] == [col]
            assert (await old.subscribe(chat))["state"]["draft"]["attachments"] == col["attachments"]

    run(go)


def test_version_060_peer_sees_060_shapes(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url, "old", versions=("0.6.0",)) as old:
            await old.call("createSession", {"channel": S, "workingDirectory": "file:///w"})
            state = (await old.subscribe(S))["state"]
            assert state["workingDirectory"] == "file:///w" and "workingDirectories" not in state
            seq = await old.dispatch(S, {"type": "session/workingDirectorySet", "directory": "file:///x"})
            await old.settle()
            assert "negotiated protocol version" in old.echo_of(seq)["rejectionReason"]

    run(go)


def test_reconnect_keeps_what_the_client_negotiated(host: RunningHost) -> None:
    col = {"type": "collection", "label": "g", "attachments": [{"type": "simple", "label": "m1"}]}

    async def go() -> None:
        async with await _client(host.url, "new", capabilities={"attachmentCollections": {}}) as new:
            chat = await new.create_session(S, DIRS)
            last = (await new.subscribe(chat))["fromSeq"]
            seq = await new.dispatch(chat, {"type": "chat/draftChanged", "draft": {"text": "x", "origin": {"kind": "user"}, "attachments": [col]}})
            await new.settle()
            assert "rejectionReason" not in new.echo_of(seq)
        async with await ProbeClient.open(host.url) as again:
            result = await again.call("reconnect", {"channel": ROOT, "clientId": "new", "lastSeenServerSeq": last, "subscriptions": [chat]})
            drafts = [e for e in result["actions"] if e["action"]["type"] == "chat/draftChanged"]
            assert drafts[0]["action"]["draft"]["attachments"] == [col]

    run(go)


def test_060_peer_gets_060_root_notifications(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url, "new") as new, await _client(host.url, "old", versions=("0.6.0",)) as old:
            await new.create_session(S, DIRS)
            seq = await new.dispatch(S, {"type": "session/workingDirectorySet", "directory": "file:///c"})
            await new.settle()
            assert "rejectionReason" not in new.echo_of(seq)
            await old.settle()
            root = [n["params"] for n in old.notes if n["method"].startswith("root/session")]
            assert root and all("workingDirectories" not in str(p) for p in root)
            assert root[0]["summary"]["workingDirectory"] == "file:///a"
            assert [p["changes"].get("workingDirectory") for p in root[1:]] == ["file:///a"]
            assert any(n["params"]["changes"].get("workingDirectories") == [*DIRS, "file:///c"] for n in new.notes if n["method"] == "root/sessionSummaryChanged")

    run(go)


def test_060_peer_never_sees_chat_subsets_even_without_session_directories(host: RunningHost) -> None:
    async def go() -> None:
        async with await _client(host.url, "new") as new, await _client(host.url, "old", versions=("0.6.0",)) as old:
            await new.call("createSession", {"channel": S})
            await old.subscribe(S)
            await new.call("createChat", {"channel": S, "chat": "ahp-chat:/sub", "workingDirectories": []})
            await new.dispatch(S, {"type": "session/titleChanged", "title": "x"})
            await old.settle()
            snap = await old.subscribe(S)
            assert "workingDirectories" not in json.dumps(snap) and "workingDirectory" not in snap["state"]
            assert all("workingDirectories" not in json.dumps(e) for e in old.envelopes())
            assert (await new.subscribe(S))["state"]["chats"][-1]["workingDirectories"] == []

    run(go)


def _answer_types(session: str, turn_prefix: str) -> list[list[str]]:
    with start_host(seed=3) as h:

        async def go() -> list[list[str]]:
            async with await _client(h.url) as c:
                chat = await c.create_session(session, DIRS)
                out = []
                for i in range(5):
                    c.notes.clear()
                    await c.run_turn(chat, f"{turn_prefix}{i}", f"message {i}")
                    out.append([e["action"]["type"] for e in c.envelopes(chat)])
                return out

        return run(go)


def test_agent_answers_do_not_depend_on_uris_or_turn_ids() -> None:
    first = _answer_types("ahp-session:/run-a", "a")
    assert first == _answer_types("ahp-session:/other-name", "zz-")
    assert len({tuple(t) for t in first}) > 1  # the turns do differ from one another
