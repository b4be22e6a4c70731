"""Each injectable host defect, shown over a real WebSocket: the defective behaviour occurs with
the defect on and does not occur with it off (same scenario, same host options)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from harness.host import DEFECTS, start_host
from harness.host.core import VERSIONS_1_0
from harness.host.probe import ProbeClient, ProbeError

pytestmark = pytest.mark.live

S = "ahp-session:/s1"
DIRS = ["file:///a", "file:///b"]
COLLECTIONS = {"attachmentCollections": {}}

Scenario = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True)
class Probe:
    scenario: Scenario
    host_options: dict[str, Any] = field(default_factory=dict)


async def _client(url: str, client_id: str = "c1", **kw: Any) -> ProbeClient:
    c = await ProbeClient.open(url)
    await c.initialize(client_id, **kw)
    return c


async def _accepted(c: ProbeClient, seq: int) -> bool:
    """Whether the host accepted clientSeq `seq` (its echo has no rejectionReason)."""
    await c.settle()
    echo = c.echo_of(seq)
    assert echo is not None, "no echo of the dispatch"
    return "rejectionReason" not in echo


async def subset_unchecked(url: str) -> bool:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        try:
            await c.call("createChat", {"channel": S, "chat": "ahp-chat:/x", "workingDirectories": ["file:///elsewhere"]})
        except ProbeError as e:
            assert e.code == -32602
            return False
        return True


async def chat_directory_unchecked(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/workingDirectorySet", "directory": "file:///elsewhere"})
        return await _accepted(c, seq)


async def uri_normalized_subset(url: str) -> bool:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        try:
            await c.call("createChat", {"channel": S, "chat": "ahp-chat:/x", "workingDirectories": ["FILE:///a/"]})
        except ProbeError:
            return False
        return True


async def empty_subset_dropped(url: str) -> bool:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        await c.call("createChat", {"channel": S, "chat": "ahp-chat:/x", "workingDirectories": []})
        snap = await c.subscribe("ahp-chat:/x")
        return "workingDirectories" not in snap["state"]


async def primary_removable(url: str) -> bool:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        await c.dispatch(S, {"type": "session/workingDirectoryRemoved", "directory": "file:///a"})
        await c.settle()
        snap = await c.subscribe(S)
        return snap["state"]["workingDirectories"][0] != "file:///a"


def _collection(*members: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    col: dict[str, Any] = {"type": "collection", "label": "group", "attachments": list(members)}
    if meta is not None:
        col["_meta"] = meta
    return col


def _simple(label: str, **extra: Any) -> dict[str, Any]:
    return {"type": "simple", "label": label, "modelRepresentation": label, **extra}


async def nested_collection_accepted(url: str) -> bool:
    async with await _client(url, capabilities=COLLECTIONS) as c:
        chat = await c.create_session(S, DIRS)
        nested = _collection(_collection(_simple("inner")))
        message = {"text": "hi", "origin": {"kind": "user"}, "attachments": [nested]}
        seq = await c.dispatch(chat, {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "2026-01-01T00:00:00.000Z", "message": message})
        return await _accepted(c, seq)


async def _old_peer_view(url: str, collection: dict[str, Any]) -> list[Any]:
    """Attachments of a turn sent with `collection` as an old peer (no capability) sees them."""
    async with await _client(url, "new", capabilities=COLLECTIONS) as new, await _client(url, "old") as old:
        chat = await new.create_session(S, DIRS)
        await old.subscribe(chat)
        message = {"text": "hi", "origin": {"kind": "user"}, "attachments": [_simple("first"), collection]}
        seq = await new.dispatch(chat, {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "2026-01-01T00:00:00.000Z", "message": message})
        assert await _accepted(new, seq)
        await old.settle()
        started = [e for e in old.envelopes(chat) if e["action"]["type"] == "chat/turnStarted"]
        return started[0]["action"]["message"]["attachments"]


async def collection_flatten_reordered(url: str) -> bool:
    members = [_simple("m1"), _simple("m2"), _simple("m3")]
    seen = await _old_peer_view(url, _collection(*members))
    assert sorted(a["label"] for a in seen) == ["first", "m1", "m2", "m3"]
    return [a["label"] for a in seen] != ["first", "m1", "m2", "m3"]


async def collection_meta_merged(url: str) -> bool:
    members = [_simple("m1", _meta={"part": "dom"}), _simple("m2")]
    seen = await _old_peer_view(url, _collection(*members, meta={"group": "g1"}))
    by_label = {a["label"]: a for a in seen}
    return by_label["m1"].get("_meta") != {"part": "dom"} or "_meta" in by_label["m2"]


async def rejected_still_applied(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/workingDirectorySet", "directory": "file:///elsewhere"})
        assert not await _accepted(c, seq)
        snap = await c.subscribe(chat)
        return "file:///elsewhere" in (snap["state"].get("workingDirectories") or [])


async def seq_repeat(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        await c.run_turn(chat, "t1", "hello")
        seqs = [e["serverSeq"] for e in c.envelopes()]
        assert len(seqs) > 5
        return any(b <= a for a, b in itertools.pairwise(seqs))


async def _title_envelopes(url: str) -> list[dict[str, Any]]:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        await c.dispatch(S, {"type": "session/titleChanged", "title": "renamed"})
        await c.settle()
        titled = [e for e in c.envelopes(S) if e["action"]["type"] == "session/titleChanged"]
        assert len(titled) == 1
        return titled


async def echo_drops_origin(url: str) -> bool:
    titled = await _title_envelopes(url)
    return "origin" not in titled[0]


async def echo_drops_clientseq(url: str) -> bool:
    titled = await _title_envelopes(url)
    origin = titled[0].get("origin") or {}
    return "clientId" in origin and "clientSeq" not in origin


async def replay_skips_action(url: str) -> bool:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        last = (await c.subscribe(S))["fromSeq"]
        for i in range(3):
            await c.dispatch(S, {"type": "session/titleChanged", "title": f"t{i}"})
        await c.settle()
    async with await ProbeClient.open(url) as again:
        result = await again.call("reconnect", {"channel": "ahp-root://", "clientId": "c1", "lastSeenServerSeq": last, "subscriptions": [S]})
        assert result["type"] == "replay"
        titles = [e["action"].get("title") for e in result["actions"] if e["action"]["type"] == "session/titleChanged"]
        return titles != ["t0", "t1", "t2"]


async def crash_on_invalid_json(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        try:
            await c.send_raw("{not json")
            answer = await c.recv()
            await c.settle()
        except (ConnectionClosed, TimeoutError):
            return True
        assert answer["error"]["code"] == -32700 and answer["id"] is None
        return False


async def chat_attachment_unpinned(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        await c.run_turn(chat, "t1", "first")
        await c.call("createChat", {"channel": S, "chat": "ahp-chat:/x"})
        await c.subscribe("ahp-chat:/x")
        attachment = {"type": "chat", "label": "earlier chat", "resource": chat}
        seq = await c.dispatch(
            "ahp-chat:/x",
            {"type": "chat/turnStarted", "turnId": "t2", "startedAt": "2026-01-01T00:00:00.000Z", "message": {"text": "see", "origin": {"kind": "user"}, "attachments": [attachment]}},
        )
        assert await _accepted(c, seq)
        echoed = c.echo_of(seq)["action"]["message"]["attachments"][0]
        return echoed.get("endTurn") != "t1"


async def server_only_accepted(url: str) -> bool:
    async with await _client(url) as c:
        seq = await c.dispatch("ahp-root://", {"type": "root/activeSessionsChanged", "activeSessions": 99})
        return await _accepted(c, seq)


async def version_gate_leak(url: str) -> bool:
    async with await _client(url, "new") as new, await _client(url, "old", versions=("0.6.0",)) as old:
        await new.create_session(S, DIRS)
        snap = await old.subscribe(S)
        assert "workingDirectories" not in snap["state"] and snap["state"]["workingDirectory"] == "file:///a"
        seq = await new.dispatch(S, {"type": "session/workingDirectorySet", "directory": "file:///c"})
        assert await _accepted(new, seq)
        await old.settle()
        return any(e["action"]["type"].startswith("session/workingDirectory") for e in old.envelopes())


async def summary_not_synced(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        await c.dispatch(chat, {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "2026-01-01T00:00:00.000Z", "message": {"text": "ask me", "origin": {"kind": "user"}}})
        await c.settle()
        chat_state = (await c.subscribe(chat))["state"]
        entry = next(x for x in (await c.subscribe(S))["state"]["chats"] if x["resource"] == chat)
        assert chat_state["status"] != 1, "the turn should be running"
        return entry["status"] != chat_state["status"] or entry["modifiedAt"] != chat_state["modifiedAt"]


async def cancel_without_turn_accepted(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/turnCancelled", "turnId": "none", "duration": 0})
        return await _accepted(c, seq)


DRAFT = {"text": "draft", "origin": {"kind": "user"}}


async def no_ping(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        try:
            await c.call("ping", {"channel": "ahp-root://"})
        except ProbeError as e:
            return e.code == -32601
        return False


async def dies_on_null(url: str) -> bool:
    async with await ProbeClient.open(url, timeout_s=3.0) as c:
        await c.send_raw("null")
        try:
            reply = await c.recv()
        except (ConnectionClosed, TimeoutError):
            reply = None
        assert reply is None or reply.get("error", {}).get("code") == -32600
    try:  # a dead host accepts no new connection either
        async with await ProbeClient.open(url, timeout_s=3.0) as again:
            await again.call("ping", {"channel": "ahp-root://"})
    except (OSError, ConnectionClosed, TimeoutError):
        return True
    return False


async def never_applies(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/draftChanged", "draft": DRAFT})
        assert await _accepted(c, seq)
        return (await c.subscribe(chat))["state"].get("draft") != DRAFT


async def echo_to_newest_socket(url: str) -> bool:
    async with await _client(url, "c1") as c, await _client(url, "c2") as newer:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/draftChanged", "draft": DRAFT})
        await c.settle()
        await newer.settle()
        return c.echo_of(seq) is None and any(
            (e.get("origin") or {}).get("clientSeq") == seq for e in newer.envelopes())


async def version_not_offered(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        return (await c.initialize("c1", versions=("0.6.0",)))["protocolVersion"] != "0.6.0"


async def claims_unknown_version(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        return (await c.initialize("c1", versions=("0.7.0", "0.6.0")))["protocolVersion"] == "0.5.0"


async def older_only(url: str) -> bool:
    """Refused with -32005 naming nothing; offered 0.3.0, the connection still gets 0.7.0 state."""
    async with await ProbeClient.open(url) as c:
        try:
            await c.initialize("c1", versions=("0.7.0", "0.6.0"))
            return False
        except ProbeError as e:
            if e.code != -32005 or e.data is not None:
                return False
    async with await ProbeClient.open(url) as c:
        got = await c.initialize("c2", versions=("0.3.0",))
        return bool(got["protocolVersion"] == "0.3.0")


# -- 1.0.0 behaviour (issue 34): the 1.0.0 host, a 1.0.0 client ---------------------------------------

V100 = {"versions": VERSIONS_1_0}


async def _client_100(url: str, client_id: str = "c1") -> ProbeClient:
    return await _client(url, client_id, versions=("1.0.0",))


async def _turns_until(c: ProbeClient, chat: str, channel: str, wanted: str, turns: int = 12) -> dict[str, Any]:
    """Run user turns on `chat` until an envelope of type `wanted` arrives on `channel` (the
    scripted agent's choices depend on the message text: a few turns reach each)."""
    for i in range(turns):
        await c.run_turn(chat, f"t{i}", f"hello {i}")
        found = [e["action"] for e in c.envelopes(channel) if e["action"]["type"] == wanted]
        if found:
            return found[-1]
    raise AssertionError(f"no {wanted} in {turns} turns")


async def _fresh(url: str, channel: str) -> dict[str, Any]:
    """`channel`'s state as a second, fresh 1.0.0 connection sees it."""
    async with await _client_100(url, "observer") as o:
        return (await o.subscribe(channel))["state"]


async def turn_error_not_durable(url: str) -> bool:
    async with await _client_100(url) as c:
        chat = await c.create_session(S, DIRS)
        await _turns_until(c, chat, chat, "chat/error")
        turns = (await _fresh(url, chat))["turns"]
        errored = [t for t in turns if t.get("state") == "error"]
        assert errored, "no errored turn"
        return any((t.get("responseParts") or [{}])[-1].get("kind") != "error" for t in errored)


async def turn_resume_unchecked(url: str) -> bool:
    async with await _client_100(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/turnResume", "turnId": "no-such-turn"})
        return await _accepted(c, seq)


async def read_status_not_mirrored(url: str) -> bool:
    async with await _client_100(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/isReadChanged", "isRead": True})
        assert await _accepted(c, seq)
        entry = next(e for e in (await _fresh(url, S))["chats"] if e["resource"] == chat)
        assert (await _fresh(url, chat))["status"] & 32
        return not entry["status"] & 32


async def change_counts_lines_only(url: str) -> bool:
    async with await _client_100(url) as c:
        chat = await c.create_session(S, DIRS)
        update = await _turns_until(c, chat, S, "session/chatUpdated")
        for _ in range(12):
            counts = [e["action"]["changes"]["changes"] for e in c.envelopes(S)
                      if e["action"]["type"] == "session/chatUpdated" and "changes" in e["action"]["changes"]]
            if counts:
                return counts[-1]["files"] == 0 and counts[-1]["additions"] > 0
            update = await _turns_until(c, chat, S, "session/chatUpdated")
        raise AssertionError(f"no change counts (last update {update})")


async def background_work_appended(url: str) -> bool:
    async with await _client_100(url) as c:
        chat = await c.create_session(S, DIRS)
        await _turns_until(c, chat, chat, "chat/backgroundWorkSet")
        ids = [w["id"] for w in (await _fresh(url, chat))["backgroundWork"]]
        return len(ids) != len(set(ids))


async def move_chat_misplaced(url: str) -> bool:
    async with await _client_100(url) as c:
        await c.create_session(S, DIRS)
        for chat in ("ahp-chat:/a", "ahp-chat:/b"):
            await c.call("createChat", {"channel": S, "chat": chat})
        await c.call("moveChat", {"channel": "ahp-chat:/a",
                                  "destination": {"kind": "session", "session": S, "after": "ahp-chat:/b"}})
        order = [e["resource"] for e in (await _fresh(url, S))["chats"]]
        return order.index("ahp-chat:/a") != order.index("ahp-chat:/b") + 1


async def caret_unbounded(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        try:
            return (await c.initialize("c1", versions=("99.0.0",)))["protocolVersion"] == "99.0.0"
        except ProbeError as e:
            assert e.code == -32005
            return False


async def refusal_without_versions(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        try:
            await c.initialize("c1", versions=("0.7.0",))
        except ProbeError as e:
            assert e.code == -32005
            return e.data is None
        raise AssertionError("a 1.0.0 host took 0.7.0")


async def rebinds_on_reinitialize(url: str) -> bool:
    async with await _client(url) as c:
        try:
            await c.initialize("c2")
        except ProbeError as e:
            assert e.code == -32600
            return False
        return True


async def serves_before_initialize(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        try:
            await c.call("subscribe", {"channel": "ahp-root://"})
        except ProbeError as e:
            assert e.code == -32601
            return False
        return True


# -- issue 33 (live hosts): imitations of what real hosts did — begin --


async def no_frame_catch(url: str) -> bool:
    async with await ProbeClient.open(url) as c:
        try:
            await c.send_raw("42")
            answer = await c.recv()
            await c.call("ping", {"channel": "ahp-root://"})
        except (ConnectionClosed, TimeoutError):
            return True
        assert answer["error"]["code"] == -32600 and answer["id"] is None
        return False


async def closes_on_unknown_channel(url: str) -> bool:
    async with await _client(url) as c:
        try:
            await c.dispatch("ahp-chat:/no-such-chat", {"type": "chat/draftChanged", "draft": DRAFT})
            await c.call("ping", {"channel": "ahp-root://"})
        except (ConnectionClosed, TimeoutError):
            return True
        return False


async def title_in_summary(url: str) -> bool:
    async with await _client(url) as c:
        await c.create_session(S, DIRS)
        seq = await c.dispatch(S, {"type": "session/titleChanged", "title": "Renamed"})
        assert await _accepted(c, seq)
        state = (await c.subscribe(S))["state"]
        return state.get("title") != "Renamed" and (state.get("summary") or {}).get("title") == "Renamed"


async def turns_on_session_channel(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        seq = await c.dispatch(chat, {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "2026-01-01T00:00:00.000Z",
                                      "message": {"text": "hi", "origin": {"kind": "user"}}})
        return not await _accepted(c, seq)


async def chat_is_the_session(url: str) -> bool:
    async with await _client(url) as c:
        chat = await c.create_session(S, DIRS)
        state = (await c.subscribe(S))["state"]
        named = [e.get("resource") for e in state.get("chats") or []]
        root = (await c.subscribe("ahp-root://"))["state"]
        caps = root["agents"][0].get("capabilities") or {}
        return chat == S and named == [S] and "multipleChats" not in caps


# -- issue 33 (live hosts) — end --


PROBES: dict[str, Probe] = {
    "subset-unchecked": Probe(subset_unchecked),
    "chat-directory-unchecked": Probe(chat_directory_unchecked),
    "uri-normalized-subset": Probe(uri_normalized_subset),
    "empty-subset-dropped": Probe(empty_subset_dropped),
    "primary-removable": Probe(primary_removable, {"immutable_primary": True}),
    "nested-collection-accepted": Probe(nested_collection_accepted),
    "collection-flatten-reordered": Probe(collection_flatten_reordered),
    "collection-meta-merged": Probe(collection_meta_merged),
    "rejected-still-applied": Probe(rejected_still_applied),
    "seq-repeat": Probe(seq_repeat),
    "echo-drops-origin": Probe(echo_drops_origin),
    "echo-drops-clientseq": Probe(echo_drops_clientseq),
    "replay-skips-action": Probe(replay_skips_action),
    "crash-on-invalid-json": Probe(crash_on_invalid_json),
    "chat-attachment-unpinned": Probe(chat_attachment_unpinned),
    "server-only-accepted": Probe(server_only_accepted),
    "version-gate-leak": Probe(version_gate_leak),
    "summary-not-synced": Probe(summary_not_synced),
    "cancel-without-turn-accepted": Probe(cancel_without_turn_accepted),
    "no-ping": Probe(no_ping),
    "dies-on-null": Probe(dies_on_null),
    "never-applies": Probe(never_applies),
    "echo-to-newest-socket": Probe(echo_to_newest_socket),
    "version-not-offered": Probe(version_not_offered, {"versions": ("0.7.0", "0.6.0")}),
    "claims-unknown-version": Probe(claims_unknown_version),
    "older-only": Probe(older_only),
    "rebinds-on-reinitialize": Probe(rebinds_on_reinitialize),
    "serves-before-initialize": Probe(serves_before_initialize),
    "turn-error-not-durable": Probe(turn_error_not_durable, V100),
    "turn-resume-unchecked": Probe(turn_resume_unchecked, V100),
    "read-status-not-mirrored": Probe(read_status_not_mirrored, V100),
    "change-counts-lines-only": Probe(change_counts_lines_only, V100),
    "background-work-appended": Probe(background_work_appended, V100),
    "move-chat-misplaced": Probe(move_chat_misplaced, V100),
    "caret-unbounded": Probe(caret_unbounded, V100),
    "refusal-without-versions": Probe(refusal_without_versions, V100),
    "no-frame-catch": Probe(no_frame_catch),
    "closes-on-unknown-channel": Probe(closes_on_unknown_channel),
    "title-in-summary": Probe(title_in_summary),
    "turns-on-session-channel": Probe(turns_on_session_channel),
    "chat-is-the-session": Probe(chat_is_the_session),
}


def _observe(name: str, defects: tuple[str, ...]) -> bool:
    probe = PROBES[name]
    with start_host(defects=defects, **probe.host_options) as host:
        return asyncio.run(asyncio.wait_for(probe.scenario(host.url), 20))


#: The file-surface defects (`resource-*`) belong to harness/host/resources.py, whose owner tests them.
PROTOCOL_DEFECTS = [name for name in DEFECTS if not name.startswith("resource-")]


def test_every_protocol_defect_has_a_probe() -> None:
    assert set(PROBES) == set(PROTOCOL_DEFECTS)


@pytest.mark.parametrize("name", PROTOCOL_DEFECTS)
def test_defect_shows_on_the_wire(name: str) -> None:
    assert _observe(name, (name,)) is True, f"{name}: the defective behaviour did not occur"
    assert _observe(name, ()) is False, f"{name}: the clean host shows the behaviour too"


def test_docs_list_every_protocol_defect() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "host.md").read_text(encoding="utf-8")
    missing = [name for name in PROTOCOL_DEFECTS if f"| `{name}` |" not in page]
    assert missing == []
