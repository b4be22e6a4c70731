"""The live run and machine against the embedded host over loopback (marker `live`)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.live.client import DEFAULT_CLIENTS
from harness.live.focus import FocusedResult, run_focused
from harness.live.replay import LIVE_KIND, finding_from_run, replay_live
from harness.live.run import LiveRun
from harness.targets.live import LiveTarget
from tests.live_setup import setup_session as _setup

pytestmark = pytest.mark.live

#: The clients' per-request timeout in these tests: a hang guard, not a speed claim (the default
#: 5 s made a loaded machine's slow `ping` answer a TARGET-TIMEOUT finding). Tests of the timeout
#: itself use a host that never answers (tests/test_live_target.py).
GUARD_S = 60.0


@pytest.fixture
def host() -> Iterator[LiveTarget]:
    t = LiveTarget("host:embedded")
    yield t
    t.close()


def test_clients_reconcile_and_converge(host: LiveTarget) -> None:
    run = LiveRun(host.url, request_timeout_s=GUARD_S)
    try:
        s = _setup(run)
        chat = next(ch for ch, k in run.kinds.items() if k == "chat")
        assert all(chat in c.view.subscribed for c in run.ready_clients())  # followed the default chat
        found = run.apply({"op": "dispatch", "client": 1, "channel": s,
                           "action": {"type": "session/titleChanged", "title": "renamed"}})
        assert found == []
        a, b = run.clients[0].view, run.clients[1].view
        assert a.confirmed[s]["title"] == b.confirmed[s]["title"] == "renamed"
        assert not any(a.pending.values()) and not any(b.pending.values())
        d = b.dispatches[-1]
        assert len(d.echoes) == 1 and d.echoes[0].origin == {"clientId": b.client_id, "clientSeq": d.client_seq}
        assert run.obs.main_fresh()  # fresh snapshots were taken and compared
    finally:
        run.close()


def test_required_rejections_and_silence(host: LiveTarget) -> None:
    run = LiveRun(host.url, request_timeout_s=GUARD_S)
    try:
        _setup(run)
        chat = next(ch for ch, k in run.kinds.items() if k == "chat")
        assert run.apply({"op": "dispatch", "client": 0, "channel": chat,
                          "action": {"type": "chat/turnCancelled", "turnId": "none", "duration": 0}}) == []
        d = run.clients[0].view.dispatches[-1]
        assert d.must_reject == "INV-044" and d.echoes and d.echoes[0].rejected
        assert run.apply({"op": "dispatch", "client": 0, "channel": chat,
                          "action": {"type": "chat/delta", "turnId": "t", "partId": "p", "content": "x"}}) == []
        assert run.clients[0].view.dispatches[-1].must_reject == "INV-053"
        missing = f"ahp-chat:/fz-{run.token}-missing"
        assert run.apply({"op": "dispatch", "client": 0, "channel": missing,
                          "action": {"type": "chat/draftChanged"}}) == []
        d = run.clients[0].view.dispatches[-1]
        assert d.silent and not d.echoes
    finally:
        run.close()


def test_reconnect_replays_what_was_missed(host: LiveTarget) -> None:
    run = LiveRun(host.url, request_timeout_s=GUARD_S)
    try:
        s = _setup(run)
        for t in ("a", "b", "c"):
            run.apply({"op": "dispatch", "client": 0, "channel": s, "action": {"type": "session/titleChanged", "title": t}})
        assert run.apply({"op": "reconnect", "client": 1, "back": 2}) == []
        r = run.clients[1].view.reconnects[-1]
        assert r.result["type"] == "replay" and len(r.expected) == 2
        assert [e["serverSeq"] for e in r.result["actions"]] == [e.seq for e in r.expected]
    finally:
        run.close()


def test_a_finding_replays_on_its_host_only() -> None:
    bad = LiveTarget("host:embedded?defect=cancel-without-turn-accepted")
    good = LiveTarget("host:embedded")
    run = LiveRun(bad.url, request_timeout_s=GUARD_S)
    try:
        _setup(run)
        chat = next(ch for ch, k in run.kinds.items() if k == "chat")
        found = run.apply({"op": "dispatch", "client": 0, "channel": chat,
                           "action": {"type": "chat/turnCancelled", "turnId": "none", "duration": 0}})
        assert [v.invariant for v in found] == ["INV-044"]
        finding = finding_from_run(run, found[0], target=bad.description, profile="0.7.0")
        assert finding.kind == LIVE_KIND and finding.extra["live"]["format"] == "ahp-fuzz/live-trace"
        assert any(f["d"] == "<" for f in finding.extra["live"]["frames"])
        assert replay_live(finding, bad.url, request_timeout_s=GUARD_S).reproduced
        assert not replay_live(finding, good.url, request_timeout_s=GUARD_S).reproduced
        again = type(finding).from_json(json.loads(json.dumps(finding.to_json())))
        assert again.kind == LIVE_KIND and again.steps == finding.steps
    finally:
        run.close()
        bad.close()
        good.close()


def test_a_seeded_run_of_the_clean_host_is_clean() -> None:
    result = _clean_run(seed=5, budget_s=120)
    assert result.steps > 200
    assert result.findings == [], [f"{f.invariant}: {f.message}" for f in result.findings]


def _clean_run(seed: int, budget_s: float) -> FocusedResult:
    from harness.engine.control import RunControl
    from harness.engine.events import EventBus, FindingFound
    from harness.live import LiveConfig, run_live_campaign
    target = LiveTarget("host:embedded")
    result = FocusedResult(None, "host:embedded")

    def sink(e: object) -> None:
        if isinstance(e, FindingFound):
            result.findings.append(e.finding)

    try:
        summary = run_live_campaign(LiveConfig(target.url, "host:embedded", seed=seed, budget_s=budget_s,
                                               control=RunControl(budget_s), max_chunks=2,
                                               chunk_examples=3, token_salt="clean",
                                               shrink_budget_s=1.0, request_timeout_s=GUARD_S), EventBus(sink))
        result.steps = summary.steps
    finally:
        target.close()
    return result


def test_060_peer_never_sees_chat_subsets(host: LiveTarget) -> None:
    """Regression: the embedded host once showed a 0.6.0 peer chats[].workingDirectories in a
    session snapshot when the session had no directories (found by the live machine, INV-046)."""
    run = LiveRun(host.url, request_timeout_s=GUARD_S)
    try:
        for i, spec in enumerate((DEFAULT_CLIENTS[0], DEFAULT_CLIENTS[3])):
            run.apply(spec.op(i))
        s = f"ahp-session:/fz-{run.token}-s1"
        run.apply({"op": "command", "client": 0, "method": "createSession",
                   "params": {"channel": s, "provider": run.provider()}})
        for i in range(2):
            run.apply({"op": "subscribe", "client": i, "channel": s})
        found = run.apply({"op": "command", "client": 0, "method": "createChat",
                           "params": {"channel": s, "chat": f"ahp-chat:/fz-{run.token}-c1", "workingDirectories": []}})
        found += run.apply({"op": "dispatch", "client": 0, "channel": s,
                            "action": {"type": "session/titleChanged", "title": "x"}})
        assert found == [], [f"{v.invariant}: {v.message}" for v in found]
    finally:
        run.close()


def test_focused_run_finds_shrinks_and_confirms() -> None:
    # the shrinker ends when ddmin converges, not on a clock: how many replays it makes (which moves
    # the host's envelope counter on, that seq-repeat depends on) is then the same on any machine
    r = run_focused("seq-repeat", seed=0, budget_s=300, max_chunks=4, shrink_budget_s=240,
                    request_timeout_s=GUARD_S)
    assert r.invariants == {"INV-041"}
    f = r.findings[0]
    assert f.extra["shrink"]["stepsShrunk"] <= f.extra["shrink"]["stepsFound"]
    assert "flaky" not in f.extra


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_cli_run_and_replay(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = _cli("run", "--target", "host:embedded?defect=server-only-accepted", "--budget", "120s",
                "--seed", "1", "--max-findings", "1", "--timeout", "60", "--quiet", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    files = sorted((out / "findings").glob("*.json"))
    assert files and json.loads(files[0].read_text())["kind"] == "live"
    again = _cli("replay", str(files[0]), "--timeout", "60", cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "reproduced" in again.stdout
    clean = _cli("replay", str(files[0]), "--target", "host:embedded", "--timeout", "60", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_cli_refuses_a_remote_host(tmp_path: Path) -> None:
    done = _cli("run", "--target", "ws://192.0.2.1:9", "--budget", "5s", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 2
    assert "loopback" in done.stderr


def test_racing_writers_converge_on_the_host_state(host: LiveTarget) -> None:
    run = LiveRun(host.url, request_timeout_s=GUARD_S)
    try:
        s = _setup(run, n=3)
        race = {"op": "race", "ops": [
            {"op": "dispatch", "client": i, "channel": s, "action": {"type": "session/titleChanged", "title": f"by {i}"}}
            for i in range(3)
        ]}
        assert run.apply(race) == []
        titles = {run.clients[i].view.confirmed[s]["title"] for i in range(3)}
        assert len(titles) == 1  # every client folded the host's order, whoever won
        assert all(len(run.clients[i].view.dispatches[-1].echoes) == 1 for i in range(3))
    finally:
        run.close()


@pytest.mark.parametrize("baseline", [False, True], ids=["inline-loop-host-on-it", "loop-thread-host-thread"])
def test_both_loop_modes_find_a_host_defect(baseline: bool) -> None:
    """The campaign's default (the loop driven inline, host:embedded served on it) and the old
    mode kept as the bench baseline (a loop thread, the host on its own thread) both fuzz the
    host of the spelling: in the default mode the given URL is a dead port, so a finding of the
    defect shows the in-loop host (with the defect) is the one fuzzed."""
    from harness.engine.control import RunControl
    from harness.engine.events import EventBus
    from harness.live import LiveConfig, run_live_campaign
    from harness.live.focus import caught_by

    spec = "host:embedded?defect=server-only-accepted"
    target = LiveTarget(spec) if baseline else None
    url = target.url if target is not None else "ws://127.0.0.1:9/"
    wanted = caught_by("server-only-accepted")
    try:
        summary = run_live_campaign(LiveConfig(url, spec, seed=0, budget_s=90, control=RunControl(90), max_chunks=3,
                                               chunk_examples=3, token_salt="modes", shrink_budget_s=0.5,
                                               stop_on=wanted, threaded_loop=baseline, host_in_loop=not baseline),
                                    EventBus())
    finally:
        if target is not None:
            target.close()
    found = {f.invariant for f in summary.findings}
    assert found & wanted, found
