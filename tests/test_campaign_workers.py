"""Campaign workers: shared finding files, a worker killed with SIGKILL, Ctrl-C, resuming."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.campaign.findings import save_once
from harness.campaign.supervisor import parse_shard, shard_seed
from harness.campaign.worker import worker_seed
from harness.corpus.finding import Finding, TraceStep, load_finding

MUTANTS_FILE = Path(__file__).resolve().parent / "mutants.py"
ROOT = Path(__file__).resolve().parent.parent


def _finding(message: str = "m") -> Finding:
    return Finding(
        invariant="INV-001", severity="violation", title="t", message=message, profile="0.7.0",
        target="reference", kind="chat", initial={"turns": []},
        steps=[TraceStep({"type": "chat/delta"}, 1_000)], failing_step=0,
    )


def test_two_writers_of_one_signature_leave_one_complete_file(tmp_path: Path) -> None:
    results: list[tuple[Path, bool]] = []
    barrier = threading.Barrier(8)

    def write(i: int) -> None:
        barrier.wait()
        results.append(save_once(tmp_path, _finding(f"writer {i}")))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(written for _, written in results) == 1
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1 and not list(tmp_path.glob(".tmp-*"))
    kept = load_finding(files[0])  # complete and valid
    winner = next(p for p, w in results if w)
    assert winner == files[0] and kept.message.startswith("writer ")
    # a later save of the same signature does not replace the first one
    path, written = save_once(tmp_path, _finding("late"))
    assert not written and load_finding(path).message == kept.message


def test_a_campaigns_replay_commands_spell_ahp_fuzz_as_it_was_invoked(tmp_path: Path) -> None:
    # Before, workers and the supervisor wrote `ahp-fuzz replay …`, which fails with 127 when the
    # campaign was started as `.venv/bin/ahp-fuzz` and the virtualenv is not on PATH.
    from harness.campaign.supervisor import CampaignSpec, Supervisor
    from harness.campaign.worker import WorkerSpec, spec_line

    program = "/opt/venv/bin/ahp-fuzz"
    path, _ = save_once(tmp_path / "findings", _finding(), program)
    assert json.loads(path.read_text())["replay"] == f"{program} replay {path}"
    worker = WorkerSpec(index=0, generation=0, run_seed=0, target="reference", profile="0.7.0", budget_s=1.0,
                        findings_dir=str(tmp_path / "findings"), database=str(tmp_path / "db"), program=program)
    assert json.loads(spec_line(worker))["program"] == program
    spec = CampaignSpec(targets=["reference"], budget_s=1.0, workers=1, seed=0, out=tmp_path,
                        database=tmp_path / "db", program=program)
    sup = Supervisor(spec)
    sup._collect_from_disk()  # a finding a worker saved but could not report
    (entry,) = sup.state.findings.values()
    assert entry["replay"] == f"{program} replay {path}"


def test_seed_streams_differ_per_worker_generation_and_shard() -> None:
    seeds = {worker_seed(1, i, g) for i in range(4) for g in range(3)}
    assert len(seeds) == 12
    assert len({shard_seed(7, i, 4) for i in range(1, 5)}) == 4
    assert parse_shard("2/8") == (2, 8)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def _mutant_target(name: str) -> str:
    argv = [sys.executable, "-m", "harness.targets.reference_adapter", "--model", f"{MUTANTS_FILE}:{name}"]
    return "adapter:" + shlex.join(argv)


def _report(out: Path) -> dict[str, Any] | None:
    try:
        return json.loads((out / "report.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _wait_for(pred: Any, timeout: float, proc: subprocess.Popen[str]) -> Any:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        value = pred()
        if value:
            return value
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"condition not met in {timeout}s (campaign exit code {proc.poll()})")


def _campaign(out: Path, *extra: str, minutes: str = "1") -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "harness.cli", "campaign", "--minutes", minutes, "--seed", "1", "--out", str(out),
           "--quiet", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_killed_worker_loses_no_finding_and_is_restarted(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # Ten minutes: the test ends it with Ctrl-C once the worker is back; a one-minute campaign could
    # finish on its own first on a slow machine and report "finished" (seen on a fresh clone).
    proc = _campaign(out, "--workers", "2", "--kinds", "chat", "--target", _mutant_target("turn_started_keeps_read"),
                     minutes="10")
    try:
        def found() -> Any:
            rep = _report(out)
            return rep if rep and rep["findings"] else None

        rep = _wait_for(found, 240, proc)  # hang guards, not speed claims
        victim = rep["findings"][0]
        finding_file = Path(victim["file"])
        assert finding_file.is_file()
        pid = next(p["pid"] for p in rep["campaign"]["processes"] if p["worker"] == victim["worker"])
        assert pid
        os.kill(pid, signal.SIGKILL)

        def restarted() -> Any:
            r = _report(out)
            if not r:
                return None
            slot = next(p for p in r["campaign"]["processes"] if p["worker"] == victim["worker"])
            return slot if slot["generation"] >= 1 and slot["pid"] else None

        slot = _wait_for(restarted, 120, proc)
        assert slot["pid"] != pid
        proc.send_signal(signal.SIGINT)  # Ctrl-C: stops cleanly, still writes the report
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, stderr  # findings were made
    final = _report(out)
    assert final is not None and final["status"] == "interrupted" and final["stoppedBecause"] == "SIGINT"
    assert any(c["worker"] == victim["worker"] and c["how"] == "signal 9" for c in final["campaign"]["crashes"])
    assert victim["signature"] in {f["signature"] for f in final["findings"]}
    assert load_finding(finding_file).signature == victim["signature"]
    assert (out / "junit.xml").is_file() and (out / "index.html").is_file()
    # results on stdout: the verdict, a replay command per finding, the HTML report's path last
    lines = stdout.strip().splitlines()
    assert lines[0].startswith("interrupted (SIGINT): "), stdout
    assert any(line.startswith("replay: ") for line in lines)
    assert lines[-1] == str(out / "index.html"), stdout
    assert "replay: " not in stderr


@pytest.mark.slow
def test_shards_merge_and_a_second_run_resumes_from_the_database(tmp_path: Path) -> None:
    # The example database is the Hypothesis lane's (docs/lanes.md): the fast lane neither reads nor writes it.
    target = _mutant_target("turn_started_keeps_read")
    db = tmp_path / "db"
    outs = []
    for shard in ("1/2", "2/2"):
        out = tmp_path / f"shard-{shard[0]}"
        proc = _campaign(out, "--workers", "1", "--kinds", "chat", "--target", target, "--shard", shard,
                         "--database", str(db), "--lane", "hypothesis", minutes="0.3")
        _, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 1, stderr  # the seeded defect is found by each shard
        outs.append(out)
    reports = [_report(o) for o in outs]
    assert all(r is not None and r["campaign"]["shard"] for r in reports)
    assert any(db.rglob("*")), "the shared example database holds entries after the first runs"
    merged = tmp_path / "merged"
    done = subprocess.run([sys.executable, "-m", "harness.cli", "report", "--merge", *map(str, outs), "--out",
                           str(merged)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    m = _report(merged)
    assert m is not None
    sigs = [f["signature"] for f in m["findings"]]
    assert len(sigs) == len(set(sigs))
    all_sigs = {f["signature"] for r in reports if r for f in r["findings"]}
    assert set(sigs) == all_sigs
    assert m["merge"]["duplicateFindings"] == sum(len(r["findings"]) for r in reports if r) - len(all_sigs)
    # A third run on the same database replays its examples first (Hypothesis' reuse phase): the
    # defect is found again at once.
    out3 = tmp_path / "again"
    proc = _campaign(out3, "--workers", "1", "--kinds", "chat", "--target", target, "--database", str(db),
                     "--lane", "hypothesis", minutes="0.3")
    _, stderr = proc.communicate(timeout=180)
    again = _report(out3)
    assert proc.returncode == 1 and again is not None, stderr
    assert min(f["foundAfterSeconds"] for f in again["findings"]) < 15


@pytest.mark.parametrize("argv", [
    ["--minutes", "0"], ["--minutes", "x"], ["--minutes", "1", "--workers", "0"],
    ["--minutes", "1", "--target", "bogus:thing"], ["--minutes", "1", "--shard", "3/2"],
    ["--minutes", "1", "--kinds", "chat,nope"], ["--minutes", "1", "--adversarial", "101"],
    ["--minutes", "1", "--workers", "1", "--target", "reference", "--target", "reference"],
])
def test_campaign_usage_errors_exit_2(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    assert main(["campaign", "--out", str(tmp_path / "run"), *argv]) == 2
    assert "error" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # nothing started, nothing written


def test_a_worker_runs_a_live_target_through_the_live_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`campaign --target host:embedded` gave its workers to the in-process engine, which ran no
    step on a live target (an untested campaign); a live target goes to the live campaign."""
    from harness.campaign import worker
    from harness.engine.run import RunSummary
    from harness.live import machine

    ran: list[str] = []

    def live(config: Any, bus: Any) -> RunSummary:
        ran.append(f"live {config.target_spec} {config.lane}")
        return RunSummary()

    def engine(config: Any, bus: Any) -> RunSummary:
        ran.append("engine")
        return RunSummary()

    monkeypatch.setattr(machine, "run_live", live)
    monkeypatch.setattr(worker, "run_campaign", engine)
    monkeypatch.setattr(worker.signal, "signal", lambda *a: None)  # the test process keeps its handlers
    sent: list[dict[str, Any]] = []

    class Wire:
        def send(self, message: dict[str, Any]) -> None:
            sent.append(message)

    for target in ("host:embedded", "reference"):
        spec = worker.WorkerSpec(index=0, generation=0, run_seed=1, target=target, profile="0.7.0", budget_s=60.0,
                                 findings_dir=str(tmp_path / "findings"), database=None)
        assert worker.run_worker(spec, Wire()) == 0  # type: ignore[arg-type]
    assert ran == ["live host:embedded fast", "engine"]
    assert [m["event"] for m in sent] == ["started", "finished", "started", "finished"]
