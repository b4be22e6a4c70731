"""`campaign` follows `run`'s `--out` rules and its deadline is as hard (issue 24): a folder that
holds an earlier run is refused unless `--overwrite` (its outputs removed, the example database
kept) or `--append` (its findings kept, listed apart); every worker gets the campaign's deadline,
counted from the command's start, not a budget of its own from when it started.

The campaigns here are staged with a supervisor that starts no worker: what is tested is the
command line's handling of the folder, not fuzzing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

import harness.campaign.supervisor as supervisor
from harness.campaign.supervisor import CampaignSpec, Slot, Supervisor
from harness.campaign.worker import WorkerSpec
from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
REGRESSION = ROOT / "corpora" / "regressions" / "inv-d01-session-4fcda5233c3c.json"


class _SteppingSupervisor:
    """A campaign that ran 5 steps and found nothing new; a finding file already in the folder
    is collected from disk, as the real supervisor's `_collect_from_disk` does."""

    def __init__(self, spec: Any, on_update: Any = None, on_checkpoint: Any = None, *, started: float) -> None:
        from harness.campaign.supervisor import CampaignState

        self.spec = spec
        self.state = CampaignState(spec, started=started)
        self.state.slots = [Slot(i, spec.targets[0]) for i in range(spec.workers)]
        (spec.out / "workers").mkdir(parents=True, exist_ok=True)
        (spec.out / "findings").mkdir(parents=True, exist_ok=True)

    def run(self) -> Any:
        self.state.slots[0].banked["steps"] = 5
        self.state.slots[0].banked["examples"] = 1
        for path in sorted((self.spec.out / "findings").glob("*.json")):
            self.state.findings["x"] = {"signature": "x", "file": str(path), "invariant": "INV-D01",
                                        "kind": "session", "replay": "…", "fromDisk": True}
        self.state.status = "finished"
        return self.state


def _earlier_campaign(out: Path) -> None:
    (out / "findings").mkdir(parents=True)
    (out / "findings" / REGRESSION.name).write_bytes(REGRESSION.read_bytes())
    (out / "example-db").mkdir()
    (out / "example-db" / "entry").write_text("kept")
    (out / "workers").mkdir()
    (out / "workers" / "w0.log").write_text("earlier")
    (out / "report.json").write_text(json.dumps({"format": "ahp-fuzz/report", "formatVersion": 1, "mode": "campaign",
                                                 "status": "finished", "startedAt": "2026-01-01T00:00:00Z",
                                                 "findings": [{}]}))


def _campaign(out: Path, *extra: str) -> list[str]:
    return ["campaign", "--minutes", "0.1", "--workers", "1", "--seed", "1", "--coverage-every", "0", "--quiet",
            "--out", str(out), *extra]


def test_a_second_campaign_into_the_same_out_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Before: it silently replaced the earlier report."""
    monkeypatch.setattr(supervisor, "Supervisor", _SteppingSupervisor)
    out = tmp_path / "c"
    _earlier_campaign(out)
    before = (out / "report.json").read_text()
    assert main(_campaign(out)) == 2
    err = capsys.readouterr().err
    assert "pass --overwrite to replace it or --append to add to it" in err
    assert (out / "report.json").read_text() == before  # untouched
    assert (out / "workers" / "w0.log").read_text() == "earlier"


def test_overwrite_replaces_the_earlier_campaign_and_keeps_its_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(supervisor, "Supervisor", _SteppingSupervisor)
    out = tmp_path / "c"
    _earlier_campaign(out)
    assert main(_campaign(out, "--overwrite")) == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "clean" and report["findings"] == []
    assert not list((out / "findings").glob("*.json"))  # the earlier findings went with it
    assert not (out / "workers" / "w0.log").exists()
    assert (out / "example-db" / "entry").read_text() == "kept"  # an accelerator: a resume reads it


def test_append_keeps_the_earlier_findings_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(supervisor, "Supervisor", _SteppingSupervisor)
    out = tmp_path / "c"
    _earlier_campaign(out)
    assert main(_campaign(out, "--append")) == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    kept = str(out / "findings" / REGRESSION.name)
    assert report["earlierFindings"] == [kept] and Path(kept).is_file()
    assert report["findings"] == [] and report["verdict"] == "clean"  # not this campaign's finding


def test_overwrite_and_append_exclude_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_campaign(tmp_path / "c", "--overwrite", "--append")) == 2
    assert "not allowed with argument" in capsys.readouterr().err


class _FakePopen:
    """Records the worker's spec line instead of starting a process."""

    started: ClassVar[list[str]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        class Pipe(io.StringIO):
            def close(self) -> None:  # the supervisor closes stdin once the spec line is written
                _FakePopen.started.append(self.getvalue())

        self.stdin = Pipe()
        self.stdout = io.StringIO("")
        self.pid = 4242


def test_every_worker_gets_the_campaigns_deadline_counted_from_the_command_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each worker got the time left as a budget of its own, counted from when it had
    imported the harness (seconds later), and the parent waited 20 s past the deadline."""
    monkeypatch.setattr(supervisor.subprocess, "Popen", _FakePopen)
    _FakePopen.started = []
    spec = CampaignSpec(targets=["reference"], budget_s=15.0, workers=2, seed=1, out=tmp_path / "c",
                        database=tmp_path / "c" / "db", coverage=False)
    sup = Supervisor(spec, started=1000.0)  # the command started at monotonic 1000
    assert sup.deadline == 1015.0 and sup.state.started == 1000.0
    for slot in sup.state.slots:
        sup._start(slot)
    for slot in sup.state.slots:
        if slot.log is not None:
            slot.log.close()
    lines = [json.loads(line) for line in _FakePopen.started]
    assert [line["deadline"] for line in lines] == [1015.0, 1015.0]
    assert supervisor.GRACE_S <= 2.0


def test_a_worker_budget_is_the_time_left_until_the_deadline() -> None:
    w = WorkerSpec(index=0, generation=0, run_seed=1, target="reference", profile="0.7.0", budget_s=15.0,
                   findings_dir="f", database=None, deadline=1015.0)
    assert w.budget_left(1003.0) == 12.0  # three seconds of start-up spent: twelve left, not fifteen
    assert w.budget_left(1020.0) == 0.0
    no_deadline = WorkerSpec(index=0, generation=0, run_seed=1, target="reference", profile="0.7.0",
                             budget_s=15.0, findings_dir="f", database=None)
    assert no_deadline.budget_left(1003.0) == 15.0


def test_a_campaign_records_the_schema_checks_its_workers_had(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(supervisor, "Supervisor", _SteppingSupervisor)
    monkeypatch.delenv("AHP_SPEC_DIR", raising=False)
    out = tmp_path / "c"
    assert main(_campaign(out)) == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["schemaChecks"] == {"payloadSchema": None, "publishedSchema": None}
    assert "off in this run: no spec folder" in (out / "index.html").read_text()
