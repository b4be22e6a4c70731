"""Fault injection: SIGINT, SIGTERM and kill -9 delivered to a running `ahp-fuzz run`, mid-run,
mid-hang and mid-shrink. A signal ends the run within a second or two with the report finalized
as "interrupted", junit.xml and the summary written, and the adapter's whole process group
ended; kill -9 leaves a report that says "running" but agrees with the findings saved, and the
next ahp-fuzz that reads it says the run died."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from tests.faults import adapter, assert_gone, cli, finish, read_report, start, wait_for

#: A stop must take no longer than this after the signal (generous for a loaded CI machine).
STOP_S = 5.0


def _stepping(folder: Path) -> bool:
    report = read_report(folder)
    return bool(report and report.get("progress", {}).get("steps", 0) > 0)


def _signal_and_finish(proc, folder, sig: int, t0: float):  # type: ignore[no-untyped-def]
    sent = time.monotonic()
    os.kill(proc.pid, sig)
    done = finish(proc, folder, t0, timeout=30)
    return done, time.monotonic() - sent


def test_sigint_mid_run_finalizes_the_report_and_ends_the_adapter_group(tmp_path: Path) -> None:
    pid, child = tmp_path / "adapter.pid", tmp_path / "child.pid"
    t0 = time.monotonic()
    proc, folder = start(tmp_path, "--budget", "60s", "--target",
                         adapter("--slow", "20", "--ignore-term", "--pidfile", str(pid),
                                 "--child-pidfile", str(child)))
    wait_for(lambda: _stepping(folder), 30, "the run to step")
    done, took = _signal_and_finish(proc, folder, signal.SIGINT, t0)
    assert done.rc == 130, done.stderr
    assert took < STOP_S
    report = done.report()
    assert report["status"] == "interrupted" and report["stoppedBecause"] == "SIGINT"
    assert report["progress"]["findings"] == len(report["findings"])
    junit = (folder / "junit.xml").read_text()
    assert "<error" in junit and "interrupted" in junit
    assert "interrupted (SIGINT)" in done.stdout  # the summary is printed all the same
    assert_gone(pid, child)


def test_sigterm_while_the_target_hangs_stops_at_once(tmp_path: Path) -> None:
    """The step waits on a hung adapter with a 20 s timeout: SIGTERM does not wait it out.
    Meanwhile the heartbeat keeps report.json current."""
    pid = tmp_path / "adapter.pid"
    t0 = time.monotonic()
    proc, folder = start(tmp_path, "--budget", "60s", "--timeout", "20", "--kinds", "chat",
                         "--target", adapter("--hang-after", "5", "--ignore-term", "--pidfile", str(pid)))
    wait_for(lambda: (read_report(folder) or {}).get("progress", {}).get("elapsedSeconds", 0) >= 3,
             30, "a heartbeat while the target hangs")
    done, took = _signal_and_finish(proc, folder, signal.SIGTERM, t0)
    assert done.rc == 143, done.stderr
    assert took < STOP_S
    report = done.report()
    assert report["status"] == "interrupted" and report["stoppedBecause"] == "SIGTERM"
    assert report["findings"] == []  # a hang cut short by the stop is not a finding
    assert_gone(pid)


def test_sigterm_mid_shrink_keeps_the_finding(tmp_path: Path) -> None:
    """Stopped while the shrinker replays candidates on a slow adapter: the finding is saved
    (as far as it was shrunk), listed in the report, and the report says interrupted."""
    pid = tmp_path / "adapter.pid"
    t0 = time.monotonic()
    proc, folder = start(tmp_path, "--budget", "60s", "--kinds", "chat", "--target",
                         adapter("--slow", "40", "--diverge-on", "chat/turnStarted", "--pidfile", str(pid)))
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 40
    while "shrinking" not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    assert "shrinking" in seen, seen
    time.sleep(0.3)
    done, took = _signal_and_finish(proc, folder, signal.SIGTERM, t0)
    assert done.rc == 143, seen + done.stderr
    assert took < STOP_S
    report = done.report()
    assert report["status"] == "interrupted"
    (entry,) = report["findings"]
    assert entry["invariant"] == "INV-D01"
    saved = json.loads(Path(entry["file"]).read_text())
    assert saved["extra"]["shrink"].get("cutShort") == "SIGTERM" or saved["extra"].get("confirmed") is False
    assert "FINDING INV-D01 [divergence]" in done.stdout
    assert_gone(pid)


def test_kill_9_leaves_a_consistent_report_and_the_next_reader_says_the_run_died(tmp_path: Path) -> None:
    pid = tmp_path / "adapter.pid"
    proc, folder = start(tmp_path, "--budget", "60s", "--kinds", "chat", "--target",
                         adapter("--slow", "10", "--diverge-on", "chat/turnStarted", "--pidfile", str(pid)))
    report = wait_for(lambda: (r := read_report(folder)) and r["findings"] and r, 40, "a finding")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    report = read_report(folder)
    assert report is not None and report["status"] == "running"
    assert report["progress"]["findings"] == len(report["findings"]) >= 1  # counters agree
    finding_file = Path(report["findings"][0]["file"])
    assert finding_file.is_file()  # nothing lost
    assert_gone(pid)  # the adapter died with its parent (parent-death signal)

    again = cli(tmp_path, "run", "--out", str(folder), "--budget", "1s")
    assert again.returncode == 2
    assert "died without finishing" in again.stderr
    replayed = cli(tmp_path, "replay", str(finding_file), "--target", "reference")
    assert "died without finishing" in replayed.stderr
    assert replayed.returncode == 0  # the reference model does not have the fault adapter's bug
