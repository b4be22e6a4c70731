"""`ahp-fuzz export-fixture`: a finding as an upstream reducer fixture (REDUCERS.md §7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import conformance
from harness.corpus.finding import Finding, TraceStep, load_finding
from harness.corpus.fixture import ExportError, fixture_from_finding
from harness.reference import Model, Profile
from harness.spec.specdir import load_reducer_fixtures
from harness.targets.reference import ReferenceTarget

from .mutants import turn_started_keeps_read

P = Profile.named("0.7.0")
CHAT = {"resource": "ahp-chat:/c", "title": "", "status": 33, "modifiedAt": "1970-01-01T00:00:00.000Z", "turns": []}
TURN = {"type": "chat/turnStarted", "turnId": "t1", "startedAt": "1970-01-01T00:00:00.005Z", "message": {"text": "hi", "origin": {"kind": "user"}}}


def _finding(**kw: Any) -> Finding:
    base: dict[str, Any] = dict(
        invariant="INV-D01", severity="divergence", title="Agrees with the reference model",
        message="chat/turnStarted: status: reference=8 target=40", profile="0.7.0",
        target="adapter:x", kind="chat", initial=CHAT,
        steps=[TraceStep({"type": 42}, 10, probe=True), TraceStep(TURN, 20), TraceStep({"type": "chat/usage"}, 30, probe=True)],
        failing_step=1,
    )
    base.update(kw)
    return Finding(**base)


def test_fixture_has_the_upstream_shape_and_only_valid_lane_steps(tmp_path: Path) -> None:
    fx = fixture_from_finding(_finding())
    assert set(fx) >= {"description", "reducer", "initial", "actions", "expected"}
    assert fx["reducer"] == "chat" and fx["actions"] == [TURN]  # probes left out
    # expected: the reference model's state with the clock fixed at 9999 ms
    assert fx["expected"] == Model(P).reduce("chat", CHAT, TURN, 9999)
    assert fx["expected"]["modifiedAt"] == "1970-01-01T00:00:09.999Z"
    assert fx["ahpFuzz"]["profile"] == "0.7.0" and "knownContradiction" not in fx["ahpFuzz"]
    (tmp_path / "a.json").write_text(json.dumps(fx))
    [loaded] = load_reducer_fixtures(tmp_path)  # the spec loader reads it like an upstream fixture
    model_result = conformance.run_reducer_fixture(loaded, Model(P, check_payloads=True))
    assert model_result.passed, model_result.problems
    # the defect fails it, the reference target passes it
    assert conformance.run_reducer_fixture_on(loaded, ReferenceTarget(P)).passed
    broken = conformance.run_reducer_fixture_on(loaded, ReferenceTarget(P, model=turn_started_keeps_read(P)))
    assert not broken.passed and any("status" in p for p in broken.problems)


def test_a_known_contradiction_is_marked_with_what_the_spec_requires() -> None:
    corpus = Path(__file__).resolve().parent.parent / "corpora" / "known"
    finding = load_finding(next(corpus.glob("inv-049*.json")))
    fx = fixture_from_finding(finding, statement="every annotation has at least one entry")
    assert fx["description"].startswith(f"ahp-fuzz finding {finding.signature}")
    assert "KNOWN UPSTREAM CONTRADICTION" in fx["description"]
    known = fx["ahpFuzz"]["knownContradiction"]
    assert known["issue"] == finding.known_issue and known["specRequires"] == "every annotation has at least one entry"


def test_a_trace_of_probes_only_cannot_be_exported() -> None:
    with pytest.raises(ExportError, match="no valid-lane step"):
        fixture_from_finding(_finding(steps=[TraceStep({"type": 42}, 10, probe=True)], failing_step=0))


def test_cli_writes_files_that_conformance_runs(tmp_path: Path) -> None:
    f = _finding()
    src = tmp_path / "finding.json"
    src.write_text(json.dumps(f.to_json()))
    out = tmp_path / "fixtures"
    r = subprocess.run([sys.executable, "-m", "harness.cli", "export-fixture", str(src), "--out", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(list(out.glob("*.json"))) == 1
    c = subprocess.run([sys.executable, "-m", "harness.cli", "conformance", "--fixtures", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stdout + c.stderr
    assert "profile 0.7.0" in c.stdout
    bad = subprocess.run([sys.executable, "-m", "harness.cli", "export-fixture", str(tmp_path / "none.json")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no such finding" in bad.stderr
