"""A host that is not conformant yet (issue 16): the live machine survives it, names what is wrong,
notices the host's death and restarts it. Real subprocesses, real WebSockets over loopback."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.engine.events import EventBus, Notice
from harness.host import start_host
from harness.live import LiveConfig, run_live_campaign
from harness.live.client import DEFAULT_CLIENTS
from harness.live.focus import caught_by
from harness.live.run import LiveRun
from harness.live.wild import TARGET_DIED
from harness.targets.live import LiveTarget
from tests.live_setup import served

pytestmark = pytest.mark.live

NEW_DEFECTS = ("no-ping", "dies-on-null", "never-applies", "echo-to-newest-socket", "version-not-offered",
               "rebinds-on-reinitialize", "serves-before-initialize")
HOST_CMD = f"host-cmd:{sys.executable} -m harness.cli host --port 0"


def _campaign(target_spec: str, url: str | None = None, target: Any = None, **kw: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    cfg = LiveConfig(url=url, target_spec=target_spec, seed=1, token_salt="wild",
                     **{"budget_s": 90.0, "max_chunks": 3, "chunk_examples": 3, "shrink_budget_s": 1.0, **kw},
                     target=target)
    summary = run_live_campaign(cfg, EventBus(events.append))
    return summary, events


@pytest.mark.parametrize("defect", NEW_DEFECTS)
def test_a_plain_run_names_each_imitation_defect(defect: str) -> None:
    """Default scenario weights (a plain run), the embedded host with one imitation defect: the run
    finishes (no harness error) and reports the defect under an id that names it."""
    summary, _ = _campaign(f"host:embedded?defect={defect}", stop_on=caught_by(defect))
    assert summary.status == "finished"
    named = [f for f in summary.findings if f.invariant in caught_by(defect)]
    assert named, f"{defect}: found only {[(f.invariant, f.message) for f in summary.findings]}"


def test_echoes_sent_astray_and_never_applied_are_two_findings_not_a_cascade() -> None:
    """echo-to-newest-socket and never-applies at once: the echo that went to another connection
    is INV-045 (saying where it went) and the action never applied is INV-H07 (seen through the
    echo another connection got). Their symptoms — clients that disagree (INV-043), folds that
    miss envelopes (INV-042), a chat beside a stale session (INV-048, INV-031) — are not
    findings of their own."""
    summary, _ = _campaign("host:embedded?defect=echo-to-newest-socket&defect=never-applies",
                           max_chunks=8, stop_on=frozenset({"INV-H07"}))
    assert summary.status == "finished"
    found = {f.invariant: f.message for f in summary.findings}
    assert "INV-H07" in found, found
    assert set(found) <= {"INV-045", "INV-H07"}, found
    assert "accepted but never applied" in found["INV-H07"]


def test_cli_run_against_imitation_defects_exits_1_with_a_finished_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--target",
         "host:embedded?defect=no-ping&defect=rebinds-on-reinitialize", "--budget", "600s", "--seed", "1",
         "--max-findings", "2", "--quiet", "--out", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stdout[-1500:] + done.stderr[-1500:]
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "finished"
    assert {f["invariant"] for f in report["findings"]} == {"INV-H01", "INV-H03"}
    assert (out / "junit.xml").is_file()


# -- host death ------------------------------------------------------------------------------------


def test_a_host_cmd_death_is_one_finding_with_status_stderr_and_frames() -> None:
    target = LiveTarget(f"{HOST_CMD} --defect dies-on-null")
    try:
        run = LiveRun(target.url, death=target.death)
        assert run.apply(DEFAULT_CLIENTS[0].op(0)) == []
        found = run.apply({"op": "garbage", "client": 0, "frame": "null"})
        assert [v.invariant for v in found] == [TARGET_DIED]
        msg = found[0].message
        assert "exited with status 70" in msg and "TypeError" in msg and "frames sent just before" in msg
        assert "; null" in msg or ": null" in msg
        run.close()
        old = target.url
        new = target.restart()  # a fresh process: a new port, printed on stdout again
        assert new != old and target.death(False) is None
        again = LiveRun(new, death=target.death)
        assert again.apply(DEFAULT_CLIENTS[0].op(0)) == []
        again.close()
    finally:
        target.close()


def test_the_campaign_restarts_a_dead_host_and_reports_its_death_once() -> None:
    target = LiveTarget(f"{HOST_CMD} --defect dies-on-null")
    try:
        summary, _events = _campaign(target.spec.text, url=target.url, target=target, max_chunks=3,
                                    weights={"garbage": 5, "turn": 5})
    finally:
        target.close()
    died = [f for f in summary.findings if f.invariant == TARGET_DIED]
    assert len(died) == 1 and "status 70" in died[0].message
    assert summary.status == "finished"
    assert summary.chunks >= 2  # fuzzed on after the death


def test_a_host_that_keeps_dying_is_dropped_with_one_line(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"  # prints a URL nobody listens on, then exits: dies at once, every time
    script.write_text("import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]\n"
                      "print(f'ws://127.0.0.1:{port}/', flush=True)\n")
    target = LiveTarget(f"host-cmd:{sys.executable} {script}", start=True)
    try:
        summary, events = _campaign(target.spec.text, url=target.url, target=target, max_chunks=20)
    finally:
        target.close()
    notes = [e.message for e in events if isinstance(e, Notice) and "dropped" in e.message]
    assert summary.stopped_because == "host keeps dying" and len(notes) == 1
    assert [f.invariant for f in summary.findings] == [TARGET_DIED]


def test_a_ws_host_that_goes_away_ends_the_run_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host nobody here started cannot be restarted: malformed frames, which may kill it, wait
    for the last part of the budget (here from 30 % of it on), so the run fuzzes it first; its
    death then ends the run with a finished report."""
    from harness.live.run import LiveRun

    sent: list[tuple[str, int]] = []  # each frame, and the steps done before it
    garbage = LiveRun._garbage

    async def spy(self: LiveRun, c: Any, frame: str) -> None:
        sent.append((frame, self.steps))
        await garbage(self, c, frame)

    monkeypatch.setattr(LiveRun, "_garbage", spy)
    host = start_host(defects=("dies-on-null",))  # served by a thread; we only know its ws:// URL
    try:
        summary, _events = _campaign(host.url, url=host.url, max_chunks=None, budget_s=20.0, hold_frames_until=0.3,
                                     weights={"garbage": 5, "turn": 1})
    finally:
        host.close()
    assert summary.status == "finished" and summary.stopped_because == "host gone"
    died = [f for f in summary.findings if f.invariant == TARGET_DIED]
    assert len(died) == 1 and "went away" in died[0].message
    assert sent and summary.examples > 1  # examples ran before any frame could kill the host


# -- a hostile host: nothing it does ends the run with an internal error ----------------------------


@contextlib.contextmanager
def hostile_host() -> Iterator[str]:
    """Wrong JSON-RPC shapes, non-object results, unknown notifications, garbage, silence on
    ping, a closed socket now and then: a host no client should crash on."""
    async def handler(ws: Any) -> None:
        n = 0
        async for frame in ws:
            n += 1
            try:
                msg = json.loads(frame)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            await ws.send("garbage{")
            await ws.send(json.dumps({"jsonrpc": "2.0", "method": "x-unknown", "params": [1, 2]}))
            await ws.send(json.dumps({"jsonrpc": "2.0", "method": "action",
                                      "params": {"channel": 5, "serverSeq": None, "action": 7, "origin": 3}}))
            await ws.send(json.dumps([1, {"id": None}]))
            rid, method = msg.get("id"), msg.get("method")
            if rid is None or method == "ping":
                continue  # silent on ping
            if n % 9 == 0:
                await ws.close()
                return
            answers: dict[str, Any] = {
                "initialize": {"protocolVersion": "0.7.0", "serverSeq": "x", "snapshots": {"a": 1}},
                "subscribe": {"snapshot": [1, 2]},
                "reconnect": {"type": "snapshot", "snapshots": 4},
            }
            if method in answers:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": answers[method]}))
            elif n % 2:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "error": "nope"}))
            else:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": "ok", "error": {"code": "x"}}))

    with served(handler, "/") as url:
        yield url


def test_a_hostile_host_never_crashes_the_run() -> None:
    with hostile_host() as url:
        summary, _events = _campaign(url, url=url, max_chunks=2, chunk_examples=1, max_steps=8,
                                     request_timeout_s=0.5, shrink_budget_s=0.5, budget_s=60.0)
    assert summary.status == "finished"
    found = {f.invariant for f in summary.findings}
    assert found, "a hostile host yields findings, never an internal error"


# -- our own bug ----------------------------------------------------------------------------------------


def test_a_harness_failure_still_finishes_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own bug (here: a live check that raises) is exit 3, with report.json `error` and junit.xml."""
    from harness.cli import main
    from harness.live import settle

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(settle, "check_live", broken)
    out = tmp_path / "run"
    code = main(["run", "--target", "host:embedded", "--budget", "600s", "--chunks", "1", "--seed", "1", "--quiet",
                 "--out", str(out)])
    assert code == 3
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "error" and "a bug of ours" in report["error"]
    assert (out / "junit.xml").is_file()


def test_a_host_silent_on_ping_is_h01_and_quiesced_by_a_drain() -> None:
    with hostile_host() as url:
        run = LiveRun(url, request_timeout_s=1.0)
        found = run.apply(DEFAULT_CLIENTS[0].op(0))
        h01 = [v for v in found if v.invariant == "INV-H01"]
        assert h01 and "timed drain" in h01[0].message and run.ping_silent
        run.apply({"op": "subscribe", "client": 0, "channel": "ahp-root://"})  # goes on, no exception
        assert not [v for v in run.apply({"op": "subscribe", "client": 0, "channel": "ahp-root://"})
                    if v.invariant == "INV-H01"]  # reported once
        run.close()


# -- with the lean settling policy and pooled connections (liveperf × livewild) --------------------


@pytest.mark.parametrize("policy", ["lean", "thorough"])
def test_a_barrier_drains_instead_of_pinging_a_host_silent_on_ping(policy: str) -> None:
    """Under either settling policy, once a ping went unanswered every later barrier of the run
    is a timed drain: no ping is sent again (each would wait the full request timeout) and no
    client is taken as caught up on the strength of an unanswered ping."""
    from harness.live.settle import SETTLE_POLICIES

    with hostile_host() as url:
        run = LiveRun(url, request_timeout_s=1.0, policy=SETTLE_POLICIES[policy])
        try:
            run.apply(DEFAULT_CLIENTS[0].op(0))
            assert run.ping_silent and run.stats["drains"] == 1
            before = len(run.transcript.frames)
            run.apply({"op": "subscribe", "client": 0, "channel": "ahp-root://"})
            assert run.stats["drains"] == 2
            assert not [f for f in run.transcript.frames[before:]
                        if f["d"] == ">" and isinstance(f["m"], dict) and f["m"].get("method") == "ping"]
        finally:
            run.close()


def test_a_dead_hosts_pooled_connections_are_dropped_and_a_restart_starts_fresh() -> None:
    from harness.live.loop import EventLoopThread
    from harness.live.pool import ConnectionPool

    target = LiveTarget(f"{HOST_CMD} --defect dies-on-null")
    loop = EventLoopThread()
    pool = ConnectionPool()
    try:
        first = LiveRun(target.url, loop=loop, pool=pool, death=target.death)
        for i in range(2):
            assert first.apply(DEFAULT_CLIENTS[i].op(i)) == []
        first.close()
        assert len(pool) >= 2
        run = LiveRun(target.url, loop=loop, pool=pool, death=target.death)
        assert run.apply(DEFAULT_CLIENTS[0].op(0)) == [] and run.stats["connectionsReused"] == 1
        found = run.apply({"op": "garbage", "client": 0, "frame": "null"})
        assert [v.invariant for v in found] == [TARGET_DIED]
        assert len(pool) == 0  # dropped at the death: client 1's connection led to the dead host
        run.close()
        assert len(pool) == 0  # and nothing of the run is handed on
        target.restart()
        fresh = LiveRun(target.url, loop=loop, pool=pool, death=target.death)
        assert fresh.apply(DEFAULT_CLIENTS[0].op(0)) == []
        assert fresh.stats["connectionsReused"] == 0 and fresh.clients[0].ready
        fresh.close()
    finally:
        loop.run(pool.aclose(), 10.0)
        loop.close()
        target.close()


def test_handshake_probes_and_bare_values_keep_the_pool_clean() -> None:
    """Every handshake probe (each on a connection of its own) and every bare JSON value (on a
    client's connection) before the run closes: only the run's initialized clients and observers
    go to the pool, and the next run on them is clean."""
    from harness.live.loop import EventLoopThread
    from harness.live.ops import preflight_ops
    from harness.live.pool import ConnectionPool

    host = LiveTarget("host:embedded")
    loop = EventLoopThread()
    pool = ConnectionPool()
    try:
        first = LiveRun(host.url, loop=loop, pool=pool)
        for i, spec in enumerate(DEFAULT_CLIENTS):
            assert first.apply(spec.op(i)) == []
        for op in preflight_ops():
            assert first.apply(op) == [], op
        assert first.obs.wire_probes  # the probes ran
        first.close()
        assert len(pool) == len(DEFAULT_CLIENTS) + len(first.observers)
        run = LiveRun(host.url, loop=loop, pool=pool)
        try:
            for i, spec in enumerate(DEFAULT_CLIENTS):
                assert run.apply(spec.op(i)) == []
            assert run.stats["connectionsReused"] == len(DEFAULT_CLIENTS)
            assert all(c.ready for c in run.clients.values())
            s = f"ahp-session:/fz-{run.token}-s1"
            assert run.apply({"op": "command", "client": 0, "method": "createSession",
                              "params": {"channel": s, "provider": run.provider()}}) == []
            for i in range(len(DEFAULT_CLIENTS)):
                assert run.apply({"op": "subscribe", "client": i, "channel": s}) == []
            assert run.apply({"op": "dispatch", "client": 1, "channel": s,
                              "action": {"type": "session/titleChanged", "title": "x"}}) == []
            assert run.apply({"op": "handshake", "client": 0, "probe": "second-initialize"}) == []
        finally:
            run.close()
    finally:
        loop.run(pool.aclose(), 10.0)
        loop.close()
        host.close()


class _OneClientRun:
    """What the `answer` scenario reads of a run: its ready clients and chat channels."""

    def __init__(self, chat: str) -> None:
        self.kinds = {chat: "chat"}
        self.clients: list[Any] = []

    def ready_clients(self) -> list[Any]:
        return self.clients

    def channels(self, kind: str) -> list[str]:
        return sorted(ch for ch, k in self.kinds.items() if k == kind)


@pytest.mark.parametrize("pending_cancel", [False, True], ids=["turn-active", "cancel-pending"])
def test_answer_reads_the_optimistic_state_a_never_echoed_dispatch_left(pending_cancel: bool) -> None:
    """A host that echoes to the wrong socket leaves a client's turnCancelled pending forever:
    its confirmed chat still has the active turn, its optimistic one does not. The `answer`
    scenario picks chats by the state it reads (it raised KeyError: 'activeTurn', exit 3)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from harness.invariants.live.base import Dispatch
    from harness.live.client import ClientSpec, SimClient
    from harness.live.draws import HypothesisDraws
    from harness.live.ops import answer
    from harness.reference import Model, Profile

    chat = "ahp-chat:/fz-s1.default"
    run = _OneClientRun(chat)
    c = SimClient(run, 0, ClientSpec(), "fz-0")  # type: ignore[arg-type]
    c.model = Model(Profile.for_version("0.7.0"))
    c.view.version = "0.7.0"
    c.view.subscribed.add(chat)
    c.view.confirmed[chat] = {"resource": chat, "title": "t", "status": 8, "modifiedAt": "x", "turns": [],
                              "activeTurn": {"id": "t1", "message": {"text": "hi", "origin": {"kind": "user"}},
                                             "startedAt": "2026-01-01T00:00:00.000Z", "responseParts": []}}
    if pending_cancel:
        c.view.pending[chat] = [Dispatch(1, chat, {"type": "chat/turnCancelled", "turnId": "t1", "duration": 1})]
    run.clients.append(c)
    seen: list[list[dict[str, Any]]] = []

    @settings(max_examples=5, database=None, deadline=None)
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        seen.append(answer(HypothesisDraws(data), run))  # type: ignore[arg-type]

    draw()
    if pending_cancel:
        assert seen and all(ops == [] for ops in seen)
    else:
        assert seen and all(ops and ops[0]["action"]["type"] == "chat/turnCancelled" for ops in seen)


#: Shrunk from a seed-2 run against echo-to-newest-socket: client 1's chat/workingDirectorySet
#: is echoed to a connection that is no client's, then client 1 reconnects and gets the echo in
#: its replay; client 2 never gets it. That is the misrouting INV-045 names, not an INV-042 fold
#: mismatch of client 2 (the replay's echo counts as one the host sent).
_ASTRAY_THEN_REPLAYED = [
    {"op": "connect", "client": 0, "offer": ["0.7.0", "0.6.0"], "collections": True, "deliveryMs": 0},
    {"op": "connect", "client": 1, "offer": ["0.7.0", "0.6.0"], "collections": True, "deliveryMs": 20},
    {"op": "connect", "client": 2, "offer": ["0.7.0", "0.6.0"], "collections": False, "deliveryMs": 0},
    {"op": "connect", "client": 3, "offer": ["0.6.0"], "collections": False, "deliveryMs": 0},
    {"op": "command", "client": 0, "method": "createSession", "params": {
        "channel": "ahp-session:/fz-TOKEN-s1", "provider": "scripted",
        "workingDirectories": ["file:///work/proj/", "file:///repo-b", "file:///C:/src/app"]}},
    *({"op": "subscribe", "client": i, "channel": "ahp-session:/fz-TOKEN-s1"} for i in range(4)),
    {"op": "command", "client": 0, "method": "createSession", "params": {
        "channel": "ahp-session:/fz-TOKEN-s2", "provider": "scripted", "workingDirectories": ["file:///C:/src/app"]}},
    *({"op": "subscribe", "client": i, "channel": "ahp-session:/fz-TOKEN-s2"} for i in range(4)),
    {"op": "dispatch", "client": 0, "channel": "ahp-chat:/fz-TOKEN-s1.default",
     "action": {"type": "chat/workingDirectoryRemoved", "directory": "file:///repo-b"}},
    {"op": "dispatch", "client": 1, "channel": "ahp-root://", "action": {"terminals": [], "type": "root/terminalsChanged"}},
    {"op": "dispatch", "client": 2, "channel": "ahp-chat:/fz-TOKEN-s1.default", "action": {
        "type": "chat/turnStarted", "turnId": "fz-t16", "startedAt": "2026-07-21T10:00:05.000Z",
        "message": {"text": "ask me", "origin": {"kind": "user"}}}},
    {"op": "dispatch", "client": 1, "channel": "ahp-chat:/fz-TOKEN-s2.default",
     "action": {"type": "chat/workingDirectorySet", "directory": "file:///C:/src/app"}},
    {"op": "reconnect", "client": 1, "back": 1},
    {"op": "garbage", "client": 3, "frame": "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"ping\""},
]


def test_an_echo_that_went_astray_and_came_back_in_a_replay_is_not_a_fold_mismatch() -> None:
    target = LiveTarget("host:embedded?defect=echo-to-newest-socket")
    run = LiveRun(target.url)
    try:
        found: list[str] = []
        for op in json.loads(json.dumps(_ASTRAY_THEN_REPLAYED).replace("TOKEN", run.token)):
            found += [v.invariant for v in run.apply(op)]
        assert "INV-045" in found  # the misrouting itself
        assert set(found) == {"INV-045"}, found
    finally:
        run.close()
        target.close()
