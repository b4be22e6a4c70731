"""Fault injection: adapters that misbehave, each under a small hard budget, in real processes.

Each test asserts the exit code, the time taken against the budget (generous: budget + 10 s),
the report's status, that no process of the adapter is left, and that nothing found is lost.
"""

from __future__ import annotations

from pathlib import Path

from tests.faults import SLACK_S, adapter, assert_gone, run


def test_adapter_that_stops_answering_costs_at_most_the_budget(tmp_path: Path) -> None:
    """It hangs after 3 replies (and ignores SIGTERM): one TARGET-TIMEOUT finding, the hung
    kind is dropped instead of every later step waiting out its timeout, and the run ends on time."""
    pid, child = tmp_path / "adapter.pid", tmp_path / "child.pid"
    r = run(tmp_path, "--budget", "4s", "--timeout", "1", "--kinds", "chat,session",
            "--target", adapter("--hang-after", "3", "--ignore-term", "--pidfile", str(pid),
                                "--child-pidfile", str(child)))
    assert r.rc == 1, r.stderr
    assert r.elapsed < 4 + SLACK_S
    report = r.report()
    assert report["status"] == "finished"
    assert [f["invariant"] for f in report["findings"]][:1] == ["TARGET-TIMEOUT"]
    assert report["progress"]["findings"] == len(report["findings"]) == len(r.finding_files())
    assert any("not fuzzing" in n for n in report["notices"]), report["notices"]
    assert "FINDING TARGET-TIMEOUT [violation]" in r.stdout
    assert_gone(pid, child)


def test_adapter_that_hangs_before_announcing_is_a_setup_error_within_the_budget(tmp_path: Path) -> None:
    pid = tmp_path / "adapter.pid"
    r = run(tmp_path, "--budget", "2s", "--target", adapter("--hang-before", "--pidfile", str(pid)))
    assert r.rc == 2, r.stderr
    assert r.elapsed < 2 + SLACK_S
    assert "no announcement line within 2 s" in r.stderr
    assert "Traceback" not in r.stderr
    assert_gone(pid)


def test_slow_correct_adapter_ends_on_the_budget_not_on_a_chunk(tmp_path: Path) -> None:
    """50 ms per request: a chunk of 25 sequences × 40 steps would take ~50 s; the budget is 3 s."""
    pid = tmp_path / "adapter.pid"
    r = run(tmp_path, "--budget", "2s", "--target", adapter("--slow", "50", "--pidfile", str(pid)))
    assert r.rc == 0, r.stderr
    assert r.elapsed < 2 + SLACK_S
    report = r.report()
    assert report["status"] == "finished" and report["stoppedBecause"] == "budget"
    assert report["elapsedSeconds"] < 3.0
    assert report["steps"] > 0 and report["findings"] == []
    assert_gone(pid)


def test_garbage_on_stdout_is_a_crash_finding(tmp_path: Path) -> None:
    pid = tmp_path / "adapter.pid"
    r = run(tmp_path, "--budget", "8s", "--kinds", "chat", "--max-findings", "1",
            "--target", adapter("--garbage-after", "3", "--pidfile", str(pid)))
    assert r.rc == 1, r.stderr
    assert r.elapsed < 8 + SLACK_S
    (finding,) = r.report()["findings"]
    assert finding["invariant"] == "TARGET-CRASH" and "not JSON" in finding["message"]
    assert Path(finding["file"]).is_file()
    assert_gone(pid)


def test_adapter_that_exits_mid_run_is_a_crash_finding_and_is_restarted(tmp_path: Path) -> None:
    pid = tmp_path / "adapter.pid"
    r = run(tmp_path, "--budget", "8s", "--kinds", "chat", "--max-findings", "1",
            "--target", adapter("--crash-after", "3", "--pidfile", str(pid)))
    assert r.rc == 1, r.stderr
    assert r.elapsed < 8 + SLACK_S
    report = r.report()
    assert report["status"] == "finished"
    crash = next(f for f in report["findings"] if f["invariant"] == "TARGET-CRASH")
    assert "exit code 3" in crash["message"]
    assert "crashing on purpose" in crash["message"]  # its stderr tail travels with the finding
    assert_gone(pid)


def test_adapter_killed_by_a_signal_is_a_crash_finding(tmp_path: Path) -> None:
    pid = tmp_path / "adapter.pid"
    r = run(tmp_path, "--budget", "8s", "--kinds", "session", "--max-findings", "1",
            "--target", adapter("--signal-after", "3", "--pidfile", str(pid)))
    assert r.rc == 1, r.stderr
    assert r.elapsed < 8 + SLACK_S
    (finding,) = r.report()["findings"]
    assert finding["invariant"] == "TARGET-CRASH" and "SIGSEGV" in finding["message"]
    assert_gone(pid)


def test_huge_replies_do_not_stall_or_break_the_run(tmp_path: Path) -> None:
    """Every reply padded to 4 MiB (the same JSON value): read whole, no deadlock, no finding."""
    pid = tmp_path / "adapter.pid"
    r = run(tmp_path, "--budget", "2s", "--kinds", "terminal", "--max-steps", "5",
            "--target", adapter("--huge-replies", "--pidfile", str(pid)))
    assert r.rc == 0, r.stderr + r.stdout
    assert r.elapsed < 2 + SLACK_S
    report = r.report()
    assert report["steps"] > 0 and report["findings"] == []
    assert_gone(pid)


def test_announced_kinds_limit_what_is_fuzzed(tmp_path: Path) -> None:
    """A partial implementation announcing kinds ["terminal"] is fuzzed on terminal only (it
    used to get a TARGET-ERROR finding per missing kind), and the console says so."""
    r = run(tmp_path, "--budget", "2s", "--target", adapter("--kinds", "terminal"))
    assert r.rc == 0, r.stdout + r.stderr
    report = r.report()
    assert report["kinds"] == ["terminal"] and report["kindsFuzzed"] == ["terminal"]
    assert report["findings"] == []
    assert "fuzzing terminal only" in r.stderr
    asked = run(tmp_path, "--budget", "1s", "--kinds", "chat", "--target", adapter("--kinds", "terminal"),
                out="asked")
    assert asked.rc == 2 and "implements none of the kinds asked for" in asked.stderr
