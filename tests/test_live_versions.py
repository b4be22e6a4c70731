"""Issue 23: every host that answers gets fuzzed.

Version trouble (a version nobody offered, an older-only host, a newer one) is a finding plus a
run on the nearest rules' subset, said at the top of stdout, report.json and the HTML — never an
exit 2 while a common language exists; an unknown profile is a one-line usage error; a frame
class that killed the host is one TARGET-DIED finding with the crash's first lines, and is not
sent again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
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
from harness.live.ops import frame_class, op_class
from harness.live.versions import (
    HostVersionsUnknown,
    check_offer,
    named_versions,
    nearest_profile,
    negotiate,
    offers_for,
    subset_note,
)
from harness.live.wild import TARGET_DIED
from harness.spec.versions import KNOWN_VERSIONS
from harness.targets.live import LiveTarget, crash_lines
from tests.live_setup import served

pytestmark = pytest.mark.live

HOST_CMD = f"host-cmd:{sys.executable} -m harness.cli host --port 0"
SPEC = Path(__file__).resolve().parent.parent.parent / "shared" / "ahp-spec" / "0.7.0"


def _campaign(target_spec: str, url: str | None = None, **kw: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    cfg = LiveConfig(url=url, target_spec=target_spec, seed=1, token_salt="versions",
                     **{"budget_s": 90.0, "max_chunks": 2, "chunk_examples": 2, "max_steps": 12,
                        "shrink_budget_s": 0.5, **kw})
    return run_live_campaign(cfg, EventBus(events.append)), events


def _headlines(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and e.headline]


# -- the offer ---------------------------------------------------------------------------------------


def test_the_offer_is_every_version_with_rules_the_profiles_first() -> None:
    clients = offers_for("0.6.0", DEFAULT_CLIENTS)
    assert clients[0].offer == ("0.6.0", *[v for v in reversed(KNOWN_VERSIONS) if v != "0.6.0"])
    assert clients[3].offer == ("0.6.0",)  # the single-version client keeps its offer (INV-046)
    assert offers_for("0.7.0", DEFAULT_CLIENTS, ("2.0.0",))[1].offer[-1] == "2.0.0"


def test_nearest_profile_and_the_subset_statement() -> None:
    assert nearest_profile("0.5.0") == "0.5.1" and nearest_profile("1.0.0") == "1.0.0"
    assert nearest_profile("0.9.5") == "0.9.0" and nearest_profile("2.0.0") == "1.0.0"
    assert subset_note("1.0.0", "x") is None and subset_note("0.9.0", "x") is None  # rules of their own
    assert subset_note("0.7.0", "x") is None and subset_note("banana", "x") is None
    older = subset_note("0.3.0", "the host speaks 0.3.0")
    assert older is not None and older.startswith("fuzzed as a 0.5.1 subset: the host speaks 0.3.0")
    assert "introduced after 0.3.0 are not sent" in older
    newer = subset_note("2.0.0", "why")
    assert newer is not None and "1.0.0 subset" in newer and "whatever 2.0.0 changed after 1.0.0" in newer


def test_refusals_name_versions_exactly_or_by_range() -> None:
    assert named_versions({"supportedVersions": ["^0.9.0", "1.0.0", ">=2.1.3", 7, "x"]}) == ["0.9.0", "1.0.0", "2.1.3"]
    assert named_versions(None) == [] and named_versions({"supportedVersions": "0.9.0"}) == []
    assert check_offer("1.0.0, 0.9.0") == ("1.0.0", "0.9.0")
    with pytest.raises(ValueError):
        check_offer("1.0")


# -- the negotiation -----------------------------------------------------------------------------------


def _negotiate(url: str, offer: list[str]) -> Any:
    return asyncio.run(negotiate(url, offer, 5.0))


def test_a_version_nobody_offered_is_said_and_fuzzed_on_its_subset() -> None:
    offer = list(offers_for("0.7.0", DEFAULT_CLIENTS)[0].offer)
    with start_host(defects=("claims-unknown-version",)) as host:
        said = _negotiate(host.url, offer)
    assert said.version == "0.5.0" and said.also_offer == ()
    assert said.note is not None and said.note.startswith("fuzzed as a 0.5.1 subset: the host negotiated 0.5.0")
    with start_host() as clean:
        assert _negotiate(clean.url, offer).note is None  # a host that speaks the offer: nothing to say


def test_an_older_only_host_is_offered_the_registrys_older_versions() -> None:
    with start_host(defects=("older-only",)) as host:
        said = _negotiate(host.url, ["0.7.0", "0.6.0"])
    assert said.version == "0.3.0" and said.also_offer == ("0.3.0",)
    assert said.note is not None and "it named none (data.supportedVersions)" in said.note


def test_a_newer_host_naming_its_versions_is_fuzzed_as_the_newest_rules() -> None:
    with start_host(versions=("1.1.0", "2.0.0")) as host:
        said = _negotiate(host.url, ["0.7.0", "0.6.0"])
    assert said.version == "1.1.0" and said.also_offer == ("1.1.0",)
    assert said.note is not None and said.note.startswith("fuzzed as a 1.0.0 subset")


def test_a_1_0_0_host_naming_its_versions_is_spoken_with_its_own_rules() -> None:
    # 0.9.0 and 1.0.0 have rules (issue 34): no subset statement, only why the first offer failed.
    with start_host(versions=("0.9.0", "1.0.0")) as host:
        said = _negotiate(host.url, ["0.7.0", "0.6.0"])
    assert said.version in ("0.9.0", "1.0.0") and said.also_offer == (said.version,)
    assert said.note is not None and "subset" not in said.note and "-32005" in said.note


@contextlib.contextmanager
def _speaks_only(version: str) -> Iterator[str]:
    """A host that answers initialize only when `version` is offered and refuses anything else
    with -32005 naming nothing; ping is null, other requests -32601."""
    async def handler(ws: Any) -> None:
        async for frame in ws:
            msg = json.loads(frame)
            if not isinstance(msg, dict) or "id" not in msg:
                continue
            rid, method, params = msg["id"], msg.get("method"), msg.get("params") or {}
            if method == "initialize" and version in (params.get("protocolVersions") or []):
                reply: dict[str, Any] = {"result": {"protocolVersion": version, "serverSeq": 0, "snapshots": []}}
            elif method == "initialize":
                reply = {"error": {"code": -32005, "message": "Unsupported protocol version"}}
            elif method == "ping":
                reply = {"result": None}
            elif method == "subscribe":  # a root snapshot; dispatches are never echoed
                reply = {"result": {"snapshot": {"resource": params.get("channel"), "fromSeq": 0,
                                                 "state": {"agents": [], "activeSessions": 0}}}}
            else:
                reply = {"error": {"code": -32601, "message": f"Method not found: {method}"}}
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, **reply}))

    with served(handler) as url:
        yield url


def test_a_host_refusing_everything_is_exit_2_with_advice_that_works() -> None:
    with _speaks_only("2.0.0") as url:
        with pytest.raises(HostVersionsUnknown) as e:
            _campaign(url, url=url, max_chunks=1)
        advice = str(e.value)
        assert "refused every protocol version ahp-fuzz can speak" in advice and "--offer VERSION" in advice
        summary, events = _campaign(url, url=url, max_chunks=1, chunk_examples=1, max_steps=3, offer=("2.0.0",))
    assert summary.status == "finished" and summary.steps > 0
    assert [h for h in _headlines(events) if h.startswith("fuzzed as a 1.0.0 subset")], _headlines(events)


def test_cli_run_against_a_host_claiming_an_unknown_version_has_findings_and_says_its_subset(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--target", "host:embedded?defect=claims-unknown-version",
         "--budget", "600s", "--seed", "1", "--max-findings", "1", "--quiet", "--out", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stdout[-1500:] + done.stderr[-1500:]
    first = done.stdout.splitlines()[0]
    assert first.startswith("note: fuzzed as a 0.5.1 subset: the host negotiated 0.5.0"), done.stdout[:500]
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "finished" and report["findings"][0]["invariant"] == "INV-046"
    assert report["headline"] == [first.removeprefix("note: ")]
    assert report["speaking"]["negotiated"] == "0.5.0"
    assert "fuzzed as a 0.5.1 subset" in (out / "index.html").read_text()


def test_an_older_only_host_is_a_run_with_findings_not_exit_2() -> None:
    summary, events = _campaign("host:embedded?defect=older-only", stop_on=frozenset({"INV-046"}), max_chunks=3)
    assert summary.status == "finished"
    assert "INV-046" in {f.invariant for f in summary.findings}
    assert [h for h in _headlines(events) if "speaks 0.3.0" in h]


# -- unknown versions are usage errors -----------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def test_an_unknown_profile_is_one_line_exit_2(tmp_path: Path) -> None:
    done = _cli("run", "--target", "reference", "--profile", "9.9.9", "--budget", "5s", "--out", "r", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'9.9.9'" in lines[0] and "0.5.1, 0.5.2, 0.6.0, 0.7.0, 0.8.0, 0.9.0, 1.0.0" in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(not SPEC.is_dir(), reason="needs the pinned spec folder ../shared/ahp-spec/0.7.0")
def test_a_changelog_naming_an_unknown_version_is_one_line_exit_2(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(SPEC, spec)
    log = spec / "CHANGELOG.md"
    log.write_text(log.read_text().replace("## [Unreleased]", "## [9.9.9] - 2026-11-30\n\n## [Unreleased]", 1))
    done = _cli("run", "--target", "reference", "--spec", str(spec), "--budget", "5s", "--out", "r", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "CHANGELOG" in lines[0] and "'9.9.9'" in lines[0] and "--profile" in lines[0]
    ok = _cli("run", "--target", "reference", "--spec", str(spec), "--profile", "0.7.0", "--budget", "600s",
              "--chunks", "1", "--chunk", "3", "--quiet", "--out", "r2", cwd=tmp_path)
    assert ok.returncode in (0, 1), ok.stderr[-800:]  # the advice works


def test_an_unknown_announced_profile_is_an_error_not_a_silent_profile() -> None:
    from harness.reference.profile_rule import choose_profile

    with pytest.raises(ValueError, match=r"'0\.5\.0'"):
        choose_profile(announcement={"protocolVersion": "0.5.0"})
    assert choose_profile(announcement={"protocolVersion": "0.6.0"}).profile.label == "0.6.0"


# -- a fragile host ------------------------------------------------------------------------------------


def test_frame_classes() -> None:
    # each JSON type its own class (issue 33: a host that dies on null and on 42 has two causes)
    assert [frame_class(f) for f in ("null", "42", '"x"', "true", "1e400")] == [
        "null frame", "number frame", "string frame", "boolean frame", "number frame"]
    assert frame_class("[]") == "array frame" and frame_class("{]") == "non-JSON frame"
    assert frame_class("{}") == "object frame"
    assert op_class({"op": "garbage", "frame": "null"}) == "null frame"
    assert op_class({"op": "handshake", "probe": "ping-first"}) == "handshake probe ping-first"
    assert op_class({"op": "dispatch"}) is None


def test_a_crash_is_quoted_by_the_first_and_last_lines_of_its_burst() -> None:
    lines = ["listening", "file.ts:235", "  if (x in msg)", "      ^", "", "TypeError: cannot use in",
             *[f"    at frame {i}" for i in range(10)], "Node.js v20"]
    times = [0.0] + [50.0] * (len(lines) - 1)  # the startup line long before the crash
    said = crash_lines(lines, times)
    assert said.startswith("file.ts:235 | if (x in msg) | ^ | TypeError: cannot use in")
    assert said.endswith("at frame 8 | at frame 9 | Node.js v20") and "listening" not in said
    assert "line(s) …" in said and "x" * 300 not in crash_lines(["x" * 1000], [1.0])


def test_a_frame_class_that_kills_the_host_is_one_finding_and_never_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.live.run import LiveRun

    sent: list[tuple[str, frozenset[str]]] = []  # each frame, and what its run avoided
    garbage = LiveRun._garbage

    async def spy(self: LiveRun, c: Any, frame: str) -> None:
        sent.append((frame, self.avoid))
        await garbage(self, c, frame)

    monkeypatch.setattr(LiveRun, "_garbage", spy)
    target = LiveTarget(f"{HOST_CMD} --defect dies-on-null")
    try:
        summary, events = _campaign(target.spec.text, url=target.url, target=target, max_chunks=6,
                                    weights={"garbage": 8, "action": 4})
    finally:
        target.close()
    died = [f for f in summary.findings if f.invariant == TARGET_DIED]
    assert len(died) == 1 and "TypeError" in died[0].message
    assert summary.stopped_because != "host keeps dying" and summary.chunks >= 3
    assert not [e for e in events if isinstance(e, Notice) and "dropped" in e.message]
    # the preflight's null killed it: it is retried once after the restart (issue 33) and, having
    # killed the host again, retired — the campaign's later runs avoid null frames (the shrinker
    # and the replay, which confirm the finding, send its null again) and still send other classes
    later = [(f, avoid) for f, avoid in sent if "null frame" in avoid]
    assert later and all(frame_class(f) != "null frame" for f, _ in later), sent
    assert any(frame_class(f) == "number frame" for f, _ in later)  # 42 is no null


def test_a_host_that_loses_echoes_is_not_waited_for_after_the_second_loss() -> None:
    from harness.live.run import ECHOES_LOST_ENOUGH, LiveRun

    with _speaks_only("0.7.0") as url:
        run = LiveRun(url, request_timeout_s=2.0)
        try:
            run.apply(DEFAULT_CLIENTS[0].op(0))
            run.apply({"op": "subscribe", "client": 0, "channel": "ahp-root://"})
            for _ in range(ECHOES_LOST_ENOUGH + 2):
                run.apply({"op": "dispatch", "client": 0, "channel": "ahp-root://",
                           "action": {"type": "root/configChanged", "config": {}}})
            assert run.echoes_lost == ECHOES_LOST_ENOUGH  # the later dispatches had no wait to lose
        finally:
            run.close()
