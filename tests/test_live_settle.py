"""The live run's settling policies (`settle.SettlePolicy`) and connection pooling, against the
embedded host over loopback (marker `live`): the lean policy sends fewer frames and still catches
what the thorough one does — a rejected action applied anyway at the very op, per-profile
projections — and a run on pooled connections records ops that replay on fresh ones."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Any

import pytest

from harness.invariants.live.base import Envelope, Snapshot
from harness.live.client import DEFAULT_CLIENTS, SimClient
from harness.live.loop import EventLoopThread
from harness.live.pool import ConnectionPool
from harness.live.replay import finding_from_run, replay_live
from harness.live.run import LiveRun
from harness.live.settle import LEAN, THOROUGH, SettlePolicy
from harness.live.snapshots import _projected_keys
from harness.targets.live import ROOT, LiveTarget
from tests.live_setup import setup_session

pytestmark = pytest.mark.live

#: The lean policy with sampling and full snapshots out of reach: only the "needed" trigger
#: takes real snapshots.
NEEDED_ONLY = replace(LEAN, every=10**6, full_every=10**6)


@pytest.fixture
def host() -> Iterator[LiveTarget]:
    t = LiveTarget("host:embedded")
    yield t
    t.close()


#: Every default client (the settling tests need the coalescing, flat and 0.6.0 ones).
_setup = partial(setup_session, n=4)


def _sent(run: LiveRun, method: str, since: int) -> int:
    return sum(1 for f in run.transcript.frames[since:]
               if f["d"] == ">" and isinstance(f["m"], dict) and f["m"].get("method") == method)


@pytest.mark.parametrize(("policy", "pings"), [(LEAN, 1), (THOROUGH, 4)], ids=["lean", "thorough"])
def test_barrier_pings_the_sender_and_proves_the_others_caught_up(host: LiveTarget, policy: SettlePolicy,
                                                                 pings: int) -> None:
    run = LiveRun(host.url, policy=policy)
    try:
        s = _setup(run)
        held = {c.view.index: len(c.view.envelopes) for c in run.clients.values()}
        op = {"op": "dispatch", "client": 1, "channel": s, "action": {"type": "session/titleChanged", "title": "renamed"}}
        assert run.apply(op) == []
        # every client holds the envelope: the barrier waited for it (on a busy machine a client
        # whose frame is still on its way after a few loop turns is pinged as well)
        assert {c.view.confirmed[s]["title"] for c in run.clients.values()} == {"renamed"}
        assert all(c.view.envelopes[-1].type == "session/titleChanged" for c in run.clients.values())
        # the same barrier again, its frames all in: lean pings the sender only, thorough everyone
        run.obs.since_env.update(held)
        before = len(run.transcript.frames)
        run.call(run._barrier(run._sources(op)))
        assert _sent(run, "ping", before) == pings
    finally:
        run.close()


def test_a_subscribe_answer_is_its_senders_barrier(host: LiveTarget) -> None:
    """Lean settling: the answer to a subscribe proves the host handled everything the client
    sent before it, as a ping's would — no ping follows; a dispatch, a notification without an
    answer, still gets one (the control)."""
    run = LiveRun(host.url)
    try:
        s = _setup(run, n=1)
        assert run.apply({"op": "command", "client": 0, "method": "createChat",
                          "params": {"channel": s, "chat": f"ahp-chat:/fz-{run.token}-c9"}}) == []
        before = len(run.transcript.frames)
        assert run.apply({"op": "subscribe", "client": 0, "channel": f"ahp-chat:/fz-{run.token}-c9"}) == []
        assert _sent(run, "subscribe", before) >= 1 and _sent(run, "ping", before) == 0
        before = len(run.transcript.frames)
        assert run.apply({"op": "dispatch", "client": 0, "channel": s,
                          "action": {"type": "session/titleChanged", "title": "t"}}) == []
        assert _sent(run, "ping", before) == 1
    finally:
        run.close()


class _Conn:
    def __init__(self) -> None:
        self.closed = asyncio.Event()


def _client(run: LiveRun, index: int, version: str, subscribed: set[str], envelopes: list[Envelope],
            history: dict[str, int] | None = None) -> SimClient:
    spec = DEFAULT_CLIENTS[3] if version == "0.6.0" else DEFAULT_CLIENTS[0]
    c = SimClient(run, index, spec, f"c{index}")
    c.conn = _Conn()  # type: ignore[assignment]
    c.view.version = version
    c.view.subscribed = set(subscribed)
    c.view.envelopes = list(envelopes)
    c.view.history = {ch: [(seq, {})] for ch, seq in (history or dict.fromkeys(subscribed, 0)).items()}
    return c


def test_caught_up_needs_every_envelope_the_pinged_client_received() -> None:
    run = LiveRun("ws://127.0.0.1:9/")
    try:
        s, chat = "ahp-session:/x", "ahp-chat:/y"
        title = Envelope(5, s, {"type": "session/titleChanged", "title": "t"}, {"clientId": "c0", "clientSeq": 1})
        rejected = Envelope(6, chat, {"type": "chat/turnCancelled"}, {"clientId": "c0", "clientSeq": 2}, rejection="no")
        newer = Envelope(7, s, {"type": "session/workingDirectorySet", "directory": "file:///a"})
        src = _client(run, 0, "0.7.0", {ROOT, s, chat}, [title, rejected, newer])
        # holds the title change; the rejection may go to its sender only
        assert not run._caught_up(_client(run, 1, "0.7.0", {ROOT, s, chat}, [title]), [src])  # lacks seq 7
        assert run._caught_up(_client(run, 1, "0.7.0", {ROOT, s, chat}, [title, newer]), [src])
        # a 0.6.0 peer must not get the 0.7.0-only type at all
        assert run._caught_up(_client(run, 3, "0.6.0", {ROOT, s}, [title]), [src])
        assert not run._caught_up(_client(run, 3, "0.6.0", {ROOT, s}, []), [src])
        # envelopes before the client's snapshot of the channel are not owed to it
        assert run._caught_up(_client(run, 2, "0.7.0", {ROOT, s}, [], history={ROOT: 0, s: 7}), [src])
        # a channel no pinged client watches, a closed connection: unknown, so it gets a ping
        assert not run._caught_up(_client(run, 2, "0.7.0", {ROOT, s, "ahp-chat:/z"}, [title, newer]), [src])
        closed = _client(run, 2, "0.7.0", {ROOT, s}, [title, newer])
        closed.conn.closed.set()  # type: ignore[union-attr]
        assert not run._caught_up(closed, [src])
        # what was checked before (since_env) is not owed again
        run.obs.since_env[0] = 3
        assert run._caught_up(_client(run, 1, "0.7.0", {ROOT, s, chat}, []), [src])
    finally:
        run.close()


def test_projection_sensitive_payloads() -> None:
    assert _projected_keys({"type": "chat/turnStarted", "message": {"text": "x", "attachments": []}}) == {"attachments"}
    assert _projected_keys({"type": "session/workingDirectorySet", "directory": "file:///a"}) == {"directory"}
    assert _projected_keys({"type": "session/chatAdded", "summary": {"workingDirectories": []}}) == {"workingDirectories"}
    assert not _projected_keys({"type": "session/titleChanged", "title": "workingDirectories"})


def test_lean_snapshots_a_rejected_action_applied_anyway_at_that_very_op() -> None:
    """A transient divergence: the host rejects a server-only action but applies it. With sampling
    and full snapshots out of reach the rejection alone makes the lean policy take a real
    snapshot of the channel right after the op, so the fold (which skipped the rejected action)
    differs from it at once — before any later op could overwrite the change."""
    bad = LiveTarget("host:embedded?defect=rejected-still-applied")
    good = LiveTarget("host:embedded")
    try:
        for target, want in ((bad, True), (good, False)):
            run = LiveRun(target.url, policy=NEEDED_ONLY)
            try:
                s = _setup(run)
                found = run.apply({"op": "dispatch", "client": 0, "channel": s,
                                   "action": {"type": "session/activityChanged", "activity": "busy"}})
                assert run.clients[0].view.dispatches[-1].echoes[0].rejected
                assert ("INV-042" in {v.invariant for v in found}) is want, found
                assert all(v.invariant == "INV-042" for v in found), found
                assert run.stats["opsSampled"] == 0 and run.stats["opsFull"] == 0
            finally:
                run.close()
    finally:
        bad.close()
        good.close()


def test_collections_are_snapshotted_in_every_profile_directories_in_every_version(host: LiveTarget) -> None:
    run = LiveRun(host.url, policy=NEEDED_ONLY)
    try:
        s = _setup(run, dirs=["file:///repo-a"])
        chat = next(ch for ch, k in run.kinds.items() if k == "chat")
        turn = {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "2026-07-21T10:00:05.000Z",
                "message": {"text": "see", "origin": {"kind": "user"}, "attachments": [
                    {"type": "collection", "label": "files", "attachments": [
                        {"type": "resource", "label": "a", "uri": "file:///repo-a/a.txt"}]}]}}
        assert run.apply({"op": "dispatch", "client": 0, "channel": chat, "action": turn}) == []
        assert len(run.obs.fresh) == 3  # 0.7.0 with collections, 0.7.0 flat, 0.6.0
        for key, snaps in run.obs.fresh.items():
            assert isinstance(snaps[chat].from_seq, int), key  # a real snapshot, not a fold
        # a plain title change needs none: the views are the clients' folds (INV-042 skips them)
        assert run.apply({"op": "dispatch", "client": 1, "channel": s,
                          "action": {"type": "session/titleChanged", "title": "plain"}}) == []
        for snaps in run.obs.fresh.values():
            assert snaps[s].from_seq is None and snaps[s].state["title"] == "plain"
        assert run.stats["opsFolded"] >= 1 and run.stats["opsNeeded"] >= 1
        # working directories project by version only: the richest profile of each version
        # takes a real snapshot, 0.7.0 without collections (shown the same) its fold
        assert run.apply({"op": "dispatch", "client": 0, "channel": s,
                          "action": {"type": "session/workingDirectorySet", "directory": "file:///repo-b"}}) == []
        real = sorted(k for k, snaps in run.obs.fresh.items() if isinstance(snaps[s].from_seq, int))
        assert real == ["0.6.0|flat", "0.7.0|collections"], real
        assert "file:///repo-b" in run.obs.fresh["0.7.0|flat"][s].state["workingDirectories"]
    finally:
        run.close()


def test_sampling_rotates_through_the_profiles(host: LiveTarget) -> None:
    run = LiveRun(host.url, policy=replace(LEAN, every=1, full_every=10**6))
    try:
        s = _setup(run)
        seen: list[str] = []
        for n in range(3):
            assert run.apply({"op": "dispatch", "client": 0, "channel": s,
                              "action": {"type": "session/titleChanged", "title": f"t{n}"}}) == []
            real = [k for k, snaps in run.obs.fresh.items() if isinstance(snaps.get(s, Snapshot(s, None, {})).from_seq, int)]
            assert len(real) == 1
            seen += real
        assert sorted(seen) == sorted(run.obs.fresh)  # each profile once in three ops
    finally:
        run.close()


def test_pooled_connections_serve_the_next_run_and_its_finding_replays() -> None:
    bad = LiveTarget("host:embedded?defect=cancel-without-turn-accepted")
    good = LiveTarget("host:embedded")
    loop = EventLoopThread()
    pool = ConnectionPool()
    try:
        first = LiveRun(bad.url, loop=loop, pool=pool, policy=LEAN)
        _setup(first)
        assert first.apply({"op": "dispatch", "client": 0, "channel": f"ahp-session:/fz-{first.token}-s1",
                            "action": {"type": "session/titleChanged", "title": "x"}}) == []
        first.close()
        assert len(pool) >= 4
        run = LiveRun(bad.url, loop=loop, pool=pool, policy=LEAN)
        try:
            _setup(run)
            assert run.stats["connectionsReused"] == 4 + len(run.observers)  # clients and observers
            assert _sent(run, "initialize", 0) == 0  # no new socket, no handshake
            assert run.clients[0].view.client_id == first.clients[0].view.client_id
            term = f"ahp-terminal:/fz-{run.token}-t1"
            claim = {"kind": "client", "clientId": run.clients[0].view.client_id}
            assert run.apply({"op": "command", "client": 0, "method": "createTerminal",
                              "params": {"channel": term, "claim": claim, "cols": 80, "rows": 24}}) == []
            # recorded with the id a fresh connection would have had
            assert run.ops[-1]["params"]["claim"]["clientId"] == f"fz-{run.token}-0"
            chat = next(ch for ch, k in run.kinds.items() if k == "chat" and run.token in ch)
            found = run.apply({"op": "dispatch", "client": 0, "channel": chat,
                               "action": {"type": "chat/turnCancelled", "turnId": "none", "duration": 0}})
            assert [v.invariant for v in found] == ["INV-044"]
            finding = finding_from_run(run, found[0], target=bad.description, profile="0.7.0")
        finally:
            run.close()
        assert replay_live(finding, bad.url, attempts=2).reproduced
        assert not replay_live(finding, good.url, attempts=2).reproduced
    finally:
        loop.run(pool.aclose(), 10.0)
        loop.close()
        bad.close()
        good.close()


def test_a_reconnected_client_is_not_pooled(host: LiveTarget) -> None:
    loop = EventLoopThread()
    pool = ConnectionPool()
    try:
        run = LiveRun(host.url, loop=loop, pool=pool, policy=LEAN)
        s = _setup(run, n=2)
        run.apply({"op": "dispatch", "client": 0, "channel": s, "action": {"type": "session/titleChanged", "title": "a"}})
        assert run.apply({"op": "reconnect", "client": 1, "back": 0}) == []
        run.close()
        assert len(pool) == 1 + len(run.observers)  # client 0 and the observers; not client 1
    finally:
        loop.run(pool.aclose(), 10.0)
        loop.close()


def test_bad_policies_are_refused() -> None:
    with pytest.raises(ValueError):
        SettlePolicy(barrier="some")
    with pytest.raises(ValueError):
        SettlePolicy(every=0)


def test_the_campaign_reports_its_sampling_and_reuses_connections() -> None:
    import gc

    from harness.engine.control import RunControl
    from harness.engine.events import EventBus, RunFinished
    from harness.live import LiveConfig, run_live_campaign

    events: list[Any] = []
    before = gc.get_threshold()
    summary = run_live_campaign(LiveConfig(None, "host:embedded", seed=3, budget_s=120, control=RunControl(120),
                                           max_chunks=1, chunk_examples=3, max_steps=6, token_salt="settle"),
                                EventBus(events.append))
    assert summary.findings == []
    assert gc.get_threshold() == before  # the campaign's collector threshold is its own
    settling = next(e for e in events if isinstance(e, RunFinished)).extra["liveSettling"]
    assert settling["policy"] == "lean" and settling["barrier"] == "sources"
    ops = sum(settling.get(k, 0) for k in ("opsNeeded", "opsSampled", "opsFull", "opsFolded"))
    assert ops == summary.steps  # every op is accounted for by why it took (or skipped) real snapshots
    assert settling["opsFolded"] > 0 and settling["pingsSkipped"] > 0
    if summary.examples > 1:
        assert settling["connectionsReused"] >= 4


def test_a_released_run_frees_what_it_received_without_the_cyclic_collector(host: LiveTarget) -> None:
    """A finished example's run is released (`LiveRun.release`): the references between the run,
    its clients and their connections are cut, so its envelopes are freed by reference counting
    when the run is dropped. Before, every example's envelopes and states waited for the cyclic
    collector (most of the objects its passes found; ~8% of a live step in a profile). The
    control: a run closed but not released keeps them until a collection."""
    import gc
    import weakref

    def envelopes_left(release: bool) -> int:
        run = LiveRun(host.url)
        s = _setup(run, n=2)
        assert run.apply({"op": "dispatch", "client": 0, "channel": s,
                          "action": {"type": "session/titleChanged", "title": "t"}}) == []
        refs = [weakref.ref(e) for c in run.clients.values() for e in c.view.envelopes]
        assert refs
        run.close()
        if release:
            run.release()
        del run
        return sum(r() is not None for r in refs)

    gc.collect()
    gc.disable()
    try:
        assert envelopes_left(release=True) == 0
        assert envelopes_left(release=False) > 0
    finally:
        gc.enable()
        gc.collect()
