"""Fault injection: SIGINT, SIGTERM and kill -9 delivered to a running `ahp-fuzz run`, mid-run,
mid-hang and mid-shrink. A signal ends the run promptly with the report finalized
as "interrupted", junit.xml and the summary written, and the adapter's whole process group
ended; kill -9 leaves a report that says "running" but agrees with the findings saved, and the
next ahp-fuzz that reads it says the run died.

The four scenarios run at once (each in its own thread); the tests then check what each left
behind. "Promptly" is tested by the mechanism, not by the machine's speed: every run has a
600 s budget (and the hung adapter a 600 s timeout), so a run that did not stop on the signal
would outlive the hang guard after it (STOP_GUARD_S) by minutes, while one that did ends
well inside it however loaded the machine is.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.faults import Finished, adapter, assert_gone, cli, finish, read_report, start, wait_for

#: A hang guard after the signal, never a speed claim: far below the 600 s a run would go on
#: without a stop, far above what a stop takes on a loaded machine.
STOP_GUARD_S = 90.0
BUDGET = "600s"


@dataclass
class Outcome:
    folder: Path
    done: Finished | None = None
    seen: str = ""  # stderr read before the signal
    extra: dict[str, Any] = field(default_factory=dict)


def _stepping(folder: Path) -> bool:
    report = read_report(folder)
    return bool(report and report.get("progress", {}).get("steps", 0) > 0)


def _signal(proc: subprocess.Popen[str], folder: Path, sig: int, t0: float, o: Outcome) -> None:
    os.kill(proc.pid, sig)
    o.done = finish(proc, folder, t0, timeout=STOP_GUARD_S)


def _sigint_mid_run(base: Path, o: Outcome) -> None:
    t0 = time.monotonic()
    proc, folder = start(base, "--budget", BUDGET, "--target",
                         adapter("--slow", "20", "--ignore-term", "--pidfile", f"{base}/adapter.pid",
                                 "--child-pidfile", f"{base}/child.pid"))
    o.folder = folder
    wait_for(lambda: _stepping(folder), 120, "the run to step")
    _signal(proc, folder, signal.SIGINT, t0, o)


def _sigterm_mid_hang(base: Path, o: Outcome) -> None:
    t0 = time.monotonic()
    proc, folder = start(base, "--budget", BUDGET, "--timeout", "600", "--kinds", "chat", "--target",
                         adapter("--hang-after", "5", "--ignore-term", "--pidfile", f"{base}/adapter.pid"))
    o.folder = folder
    wait_for(lambda: (read_report(folder) or {}).get("progress", {}).get("elapsedSeconds", 0) >= 3,
             120, "a heartbeat while the target hangs")
    _signal(proc, folder, signal.SIGTERM, t0, o)


def _sigterm_mid_shrink(base: Path, o: Outcome) -> None:
    t0 = time.monotonic()
    proc, folder = start(base, "--budget", BUDGET, "--kinds", "chat", "--target",
                         adapter("--slow", "40", "--diverge-on", "chat/turnStarted",
                                 "--pidfile", f"{base}/adapter.pid"))
    o.folder = folder
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while "shrinking" not in o.seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        o.seen += line
    time.sleep(0.3)
    _signal(proc, folder, signal.SIGTERM, t0, o)


def _kill_9(base: Path, o: Outcome) -> None:
    proc, folder = start(base, "--budget", BUDGET, "--kinds", "chat", "--target",
                         adapter("--slow", "10", "--diverge-on", "chat/turnStarted",
                                 "--pidfile", f"{base}/adapter.pid"))
    o.folder = folder
    wait_for(lambda: (r := read_report(folder)) and r["findings"], 120, "a finding")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    o.extra["report"] = read_report(folder)
    assert o.extra["report"] is not None
    finding_file = Path(o.extra["report"]["findings"][0]["file"])
    o.extra["finding_file"] = finding_file
    o.extra["again"] = cli(base, "run", "--out", str(folder), "--budget", "1s")
    o.extra["replayed"] = cli(base, "replay", str(finding_file), "--target", "reference")


SCENARIOS: dict[str, Callable[[Path, Outcome], None]] = {
    "sigint": _sigint_mid_run,
    "hang": _sigterm_mid_hang,
    "shrink": _sigterm_mid_shrink,
    "kill9": _kill_9,
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    base = tmp_path_factory.mktemp("signals")
    results: dict[str, Outcome] = {}
    errors: dict[str, BaseException] = {}

    def one(name: str, drive: Callable[[Path, Outcome], None]) -> None:
        folder = base / name
        folder.mkdir()
        results[name] = o = Outcome(folder)
        try:
            drive(folder, o)
        except BaseException as e:
            errors[name] = e

    threads = [threading.Thread(target=one, args=item) for item in SCENARIOS.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results["_errors"] = Outcome(base, extra=errors)  # type: ignore[arg-type]
    return results


def _outcome(outcomes: dict[str, Outcome], name: str) -> Outcome:
    error = outcomes["_errors"].extra.get(name)
    if error is not None:
        raise error
    return outcomes[name]


def test_sigint_mid_run_finalizes_the_report_and_ends_the_adapter_group(outcomes: dict[str, Outcome]) -> None:
    o = _outcome(outcomes, "sigint")
    assert o.done is not None and o.done.rc == 130, o.done and o.done.stderr
    report = o.done.report()
    assert report["status"] == "interrupted" and report["stoppedBecause"] == "SIGINT"
    assert report["progress"]["findings"] == len(report["findings"])
    junit = (o.done.out / "junit.xml").read_text()
    assert "<error" in junit and "interrupted" in junit
    assert "interrupted (SIGINT)" in o.done.stdout  # the summary is printed all the same
    assert_gone(o.done.out.parent / "adapter.pid", o.done.out.parent / "child.pid")


def test_sigterm_while_the_target_hangs_stops_at_once(outcomes: dict[str, Outcome]) -> None:
    """The step waits on a hung adapter with a 600 s timeout: SIGTERM does not wait it out.
    Meanwhile the heartbeat kept report.json current (the scenario waited for it)."""
    o = _outcome(outcomes, "hang")
    assert o.done is not None and o.done.rc == 143, o.done and o.done.stderr
    report = o.done.report()
    assert report["status"] == "interrupted" and report["stoppedBecause"] == "SIGTERM"
    assert report["findings"] == []  # a hang cut short by the stop is not a finding
    assert_gone(o.done.out.parent / "adapter.pid")


def test_sigterm_mid_shrink_keeps_the_finding(outcomes: dict[str, Outcome]) -> None:
    """Stopped while the shrinker replays candidates on a slow adapter: the finding is saved
    (as far as it was shrunk), listed in the report, and the report says interrupted."""
    import json

    o = _outcome(outcomes, "shrink")
    assert "shrinking" in o.seen, o.seen
    assert o.done is not None and o.done.rc == 143, o.seen + o.done.stderr
    report = o.done.report()
    assert report["status"] == "interrupted"
    (entry,) = report["findings"]
    assert entry["invariant"] == "INV-D01"
    saved = json.loads(Path(entry["file"]).read_text())
    assert saved["extra"]["shrink"].get("cutShort") == "SIGTERM" or saved["extra"].get("confirmed") is False
    assert "FINDING INV-D01 [divergence]" in o.done.stdout
    assert_gone(o.done.out.parent / "adapter.pid")


def test_kill_9_leaves_a_consistent_report_and_the_next_reader_says_the_run_died(
    outcomes: dict[str, Outcome],
) -> None:
    o = _outcome(outcomes, "kill9")
    report = o.extra["report"]
    assert report["status"] == "running"
    assert report["progress"]["findings"] == len(report["findings"]) >= 1  # counters agree
    assert o.extra["finding_file"].is_file()  # nothing lost
    assert_gone(o.folder.parent / "adapter.pid")  # the adapter died with its parent (parent-death signal)
    again = o.extra["again"]
    assert again.returncode == 2
    assert "died without finishing" in again.stderr
    replayed = o.extra["replayed"]
    assert "died without finishing" in replayed.stderr
    assert replayed.returncode == 0  # the reference model does not have the fault adapter's bug
