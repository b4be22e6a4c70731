"""`--json` for `run`, `replay` and `campaign` (issue 24): stdout is one JSON document (format
`ahp-fuzz/result`, version 1: verdict, findings with their files and replay commands, known
issues, report paths); every line for people goes to stderr; the exit codes are unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.report.result import RESULT_FORMAT, RESULT_FORMAT_VERSION

ROOT = Path(__file__).resolve().parent.parent
MUTANT = (f"adapter:{sys.executable} -m harness.targets.reference_adapter "
          f"--model {ROOT / 'tests' / 'mutants.py'}:directory_set_duplicates")
REGRESSION = ROOT / "corpora" / "regressions" / "inv-d01-session-4fcda5233c3c.json"


def _document(out: str) -> dict[str, Any]:
    doc = json.loads(out)  # the whole of stdout: one document, nothing else
    assert doc["format"] == RESULT_FORMAT and doc["formatVersion"] == RESULT_FORMAT_VERSION
    return doc


def test_run_json_pipes_into_a_json_reader(tmp_path: Path) -> None:
    """The issue's check, as a user types it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("AHP_SPEC_DIR", None)
    line = (f"{sys.executable} -m harness.cli run --budget 600s --chunks 1 --seed 1 --kinds root --out rel --json "
            f"| {sys.executable} -c 'import json,sys; d = json.load(sys.stdin); print(d[\"verdict\"], d[\"exitCode\"])'")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr  # one chunk: clean whatever the machine's load
    assert done.stdout.split() == ["clean", "0"], done.stdout + done.stderr
    assert "report: rel/report.json" in done.stderr  # the human lines went to stderr


def test_run_json_lists_each_finding_with_its_file_and_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mutant"
    code = main(["run", "--kinds", "session", "--budget", "600s", "--seed", "1", "--max-findings", "1",
                 "--out", str(out), "--target", MUTANT, "--json"])
    cap = capsys.readouterr()
    assert code == 1, cap.err
    doc = _document(cap.out)
    assert "FINDING" in cap.err and "report: " in cap.err
    assert doc["command"] == "run" and doc["verdict"] == "found" and doc["exitCode"] == 1
    assert doc["reports"] == {"json": str(out / "report.json"), "junit": str(out / "junit.xml"),
                              "html": str(out / "index.html")}
    (f,) = doc["findings"]
    assert f["invariant"] and Path(f["file"]).is_file() and f["file"].startswith(str(out / "findings"))
    assert " replay " in f["replay"] and f["file"] in f["replay"]
    assert isinstance(doc["known"], dict)
    assert doc["steps"] > 0 and doc["target"].startswith("adapter:")


def test_replay_json_says_reproduced_or_not(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(REGRESSION), "--json"]) == 1
    cap = capsys.readouterr()
    doc = _document(cap.out)
    assert doc["command"] == "replay" and doc["verdict"] == "reproduced" and doc["exitCode"] == 1
    assert doc["finding"]["file"] == str(REGRESSION) and doc["finding"]["invariant"] == "INV-D01"
    assert doc["violations"] and doc["summary"].startswith("reproduced: INV-D01 fires at step")
    assert "reproduced: INV-D01" in cap.err
    assert main(["replay", str(REGRESSION), "--target", "reference", "--json"]) == 0
    fixed = _document(capsys.readouterr().out)
    assert fixed["verdict"] == "not-reproduced" and fixed["exitCode"] == 0


def test_a_usage_error_is_a_json_document_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "missing.json"), "--json"]) == 2
    cap = capsys.readouterr()
    doc = _document(cap.out)
    assert doc["verdict"] == "usage-error" and doc["exitCode"] == 2 and doc["error"]
    assert "ahp-fuzz: error:" in cap.err


class _OneFindingSupervisor:
    """A campaign that ran and found one thing, without workers."""

    def __init__(self, spec: Any, on_update: Any = None, on_checkpoint: Any = None, **_: Any) -> None:
        from harness.campaign.supervisor import CampaignState, Slot

        self.state = CampaignState(spec)
        self.state.slots = [Slot(i, spec.targets[0]) for i in range(spec.workers)]
        (spec.out / "workers").mkdir(parents=True, exist_ok=True)

    def run(self) -> Any:
        self.state.slots[0].banked.update(steps=9, examples=2)
        self.state.findings["s"] = {"signature": "s", "invariant": "INV-D01", "severity": "divergence",
                                    "kind": "chat", "message": "m", "title": "t", "file": "f.json",
                                    "replay": "ahp-fuzz replay f.json", "worker": 0}
        self.state.status = "finished"
        return self.state


def test_campaign_json_is_the_only_thing_on_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import harness.campaign.supervisor as supervisor

    monkeypatch.setattr(supervisor, "Supervisor", _OneFindingSupervisor)
    out = tmp_path / "c"
    code = main(["campaign", "--minutes", "0.1", "--workers", "1", "--seed", "1", "--coverage-every", "0",
                 "--quiet", "--out", str(out), "--json"])
    cap = capsys.readouterr()
    assert code == 1, cap.err
    doc = _document(cap.out)
    assert doc["command"] == "campaign" and doc["verdict"] == "found"
    assert doc["findings"] == [{"invariant": "INV-D01", "severity": "divergence", "title": "t", "kind": "chat",
                                "message": "m", "signature": "s", "file": "f.json",
                                "replay": "ahp-fuzz replay f.json", "worker": 0}]
    assert doc["campaign"] == {"workers": 1, "restarts": 0}
    assert doc["reports"]["html"] == str(out / "index.html")
    assert "FOUND: 1 finding(s)" in cap.err and cap.err.rstrip().endswith(str(out / "index.html"))
