"""A run or campaign that executed no step tested nothing: it is never "clean" (issue 24: on a
loaded machine `run --budget 5s` did 0 steps and said "clean — no findings in 0 steps"). It
says why and exits 2, on stdout, on stderr, in report.json, junit.xml and the HTML page.

The slow start is staged with an injected clock (`harness.cli.run.CLOCK`): the budget is spent
before the first step whatever the machine's speed; no wall-clock assertion."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import harness.cli.run as run_cli
from harness.cli import main
from harness.engine.events import RunFinished
from harness.report.console import ConsoleReporter
from harness.report.html_sections import verdict
from harness.report.merge import junit_from_report
from harness.report.writers import FindingWriter, JsonReport, JunitReport, run_verdict


def _slow_start(monkeypatch: pytest.MonkeyPatch, startup_s: float = 10.0) -> None:
    """The run's clock: its first reading starts the budget, and every later one is `startup_s`
    on (start-up took that long), creeping a millisecond per reading."""
    ticks = itertools.count()

    def clock() -> float:
        n = next(ticks)
        return 1000.0 if n == 0 else 1000.0 + startup_s + n / 1000

    monkeypatch.setattr(run_cli, "CLOCK", clock)


@pytest.mark.expect_untested
def test_a_run_whose_start_up_took_the_budget_exits_2_with_the_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _slow_start(monkeypatch)
    out = tmp_path / "run"
    code = main(["run", "--budget", "1s", "--seed", "1", "--kinds", "root", "--out", str(out)])
    cap = capsys.readouterr()
    assert code == 2, cap.out + cap.err
    assert "clean" not in cap.out
    assert "untested: 0 finding(s)" in cap.out and "0 steps" in cap.out
    assert "ahp-fuzz: error: nothing was tested: the 1s budget ran out before the first step" in cap.err
    assert "give a longer --budget" in cap.err
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "untested" and report["steps"] == 0
    assert report["untested"].startswith("the 1s budget ran out before the first step: start-up took it")
    junit = (out / "junit.xml").read_text()
    assert 'errors="1"' in junit and "nothing tested" in junit
    html = (out / "index.html").read_text()
    assert 'data-verdict="untested"' in html and "nothing tested" in html


def _finished(steps: int, status: str = "finished", findings: list[Any] | None = None) -> RunFinished:
    return RunFinished(12.5, 0, steps, findings or [], {}, stopped_because="budget", status=status)


def test_the_reporters_call_a_zero_step_run_untested(tmp_path: Path) -> None:
    from rich.console import Console

    err, out = Console(record=True, width=400), Console(record=True, width=400)
    ConsoleReporter(err, out=out)(_finished(0))
    assert out.export_text().startswith("untested: 0 finding(s)")
    writer = FindingWriter(tmp_path / "findings")
    report = JsonReport(tmp_path / "report.json", writer)
    report(_finished(0))
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["verdict"] == "untested" and "no step ran" in data["untested"]
    JunitReport(tmp_path / "junit.xml", writer)(_finished(0))
    assert "<error" in (tmp_path / "junit.xml").read_text()
    JunitReport(tmp_path / "junit.xml", writer)(_finished(7))
    assert "<error" not in (tmp_path / "junit.xml").read_text()
    assert verdict({"status": "finished", "steps": 0, "findings": []})[0] == "untested"
    assert verdict({"status": "finished", "steps": 3, "findings": []})[0] == "clean"


def test_run_verdict() -> None:
    assert run_verdict(status="finished", findings=0, steps=0) == "untested"
    assert run_verdict(status="finished", findings=0, steps=1) == "clean"
    assert run_verdict(status="finished", findings=2, steps=9) == "found"
    assert run_verdict(status="interrupted", findings=0, steps=0) == "interrupted"
    assert run_verdict(status="error", findings=1, steps=5) == "error"
    assert run_verdict(status="partial", findings=0, steps=5) == "partial"


class _NoStepSupervisor:
    """A campaign whose workers ran no step (their start-up took the budget), without workers."""

    def __init__(self, spec: Any, on_update: Any = None, on_checkpoint: Any = None, **_: Any) -> None:
        from harness.campaign.supervisor import CampaignState, Slot

        self.state = CampaignState(spec)
        self.state.slots = [Slot(i, spec.targets[0]) for i in range(spec.workers)]
        (spec.out / "workers").mkdir(parents=True, exist_ok=True)

    def run(self) -> Any:
        self.state.status = "finished"
        return self.state


@pytest.mark.expect_untested
def test_a_campaign_that_ran_no_step_exits_2_with_the_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import harness.campaign.supervisor as supervisor

    monkeypatch.setattr(supervisor, "Supervisor", _NoStepSupervisor)
    out = tmp_path / "c"
    code = main(["campaign", "--minutes", "0.1", "--workers", "1", "--seed", "1", "--coverage-every", "0",
                 "--out", str(out), "--quiet"])
    cap = capsys.readouterr()
    assert code == 2, cap.out + cap.err
    assert cap.out.startswith("untested: 0 finding(s), 0 known-issue hit(s) in 0 runs / 0 steps")
    assert "clean" not in cap.out
    assert cap.out.splitlines()[-1] == str(out / "index.html")  # `| tail -1` still names the page
    assert "ahp-fuzz: error: nothing was tested: no worker ran a step" in cap.err
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "untested" and "start-up took the 0.1 min budget" in report["untested"]
    assert "<error" in (out / "junit.xml").read_text()


def test_a_merge_junit_flags_an_untested_or_interrupted_campaign() -> None:
    base = {"mode": "campaign", "findings": [], "elapsedSeconds": 3.0, "stoppedBecause": "budget"}
    assert "<error" not in junit_from_report({**base, "status": "finished", "steps": 5})
    assert "<error" in junit_from_report({**base, "status": "finished", "steps": 0})
    interrupted = junit_from_report({**base, "status": "interrupted", "steps": 5, "stoppedBecause": "SIGINT"})
    assert 'errors="1"' in interrupted and "campaign interrupted (SIGINT)" in interrupted


@pytest.mark.expect_untested
def test_a_database_the_fast_lane_does_not_use_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24: `--database` was a silent no-op on the default lane."""
    _slow_start(monkeypatch)  # the notice is the run's first word; no step is needed to see it
    out = tmp_path / "run"
    main(["run", "--budget", "1s", "--kinds", "root", "--database", str(tmp_path / "db"), "--out", str(out)])
    err = capsys.readouterr().err
    assert "note: --database is read and written by --lane hypothesis only" in err
    assert any("--database" in n for n in json.loads((out / "report.json").read_text())["notices"])
    main(["run", "--budget", "1s", "--kinds", "root", "--database", str(tmp_path / "db"), "--lane", "hypothesis",
          "--out", str(tmp_path / "h")])
    assert "--database is read and written" not in capsys.readouterr().err
