"""The mutation check: copies of the reference model, each with one guard or transition broken,
served through the adapter protocol in a real subprocess. The fuzzer must find every one within
a fixed budget, and each finding must replay — failing on the mutant, clean on the reference.

Deterministic: fixed seed, and each run stops at its first finding (the budget only bounds a
regression in detection; it is not part of a passing run's behaviour).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.corpus.finding import load_finding
from harness.engine.events import EventBus
from harness.engine.replay import replay
from harness.engine.run import RunConfig, run_campaign
from harness.reference import Profile
from harness.targets.base import open_target

from .mutants import MUTANTS

MUTANTS_FILE = Path(__file__).resolve().parent / "mutants.py"
#: A hang guard, not a bound the verdict depends on: each run stops at its first finding.
BUDGET_S = 600.0


def adapter_spec(name: str) -> str:
    argv = [sys.executable, "-m", "harness.targets.reference_adapter", "--model", f"{MUTANTS_FILE}:{name}"]
    return "adapter:" + shlex.join(argv)


@pytest.mark.fuzz
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_fuzzer_detects_mutant(name: str, tmp_path: Path) -> None:
    # All 15, the three that used to need the slow tier's longer budget included (reorder
    # dropping messages, toolCallConfirmed from running, 0.8.0 replace moving index 0): the
    # generators now reach them in seconds (bench/results/engine.md).
    _detect(name, BUDGET_S, tmp_path)


@pytest.mark.fuzz
def test_reference_served_as_adapter_is_clean() -> None:
    # No false positives through the adapter path: the unmodified model, served in a
    # subprocess (fast form), fuzzed for a fixed number of sequences.
    argv = [sys.executable, "-m", "harness.targets.reference_adapter"]
    spec = "adapter:" + shlex.join(argv)
    profile = Profile.named("0.7.0")
    target = open_target(spec, profile=profile)
    try:
        config = RunConfig(
            target=target, target_spec=spec, target_is_model=False, profile=profile, seed=2,
            budget_s=None, max_chunks=2, chunk_examples=10, kinds=("chat", "session", "terminal"),
            probe_every=5,
        )
        summary = run_campaign(config, EventBus())
    finally:
        target.close()
    assert summary.steps > 100
    assert summary.findings == [], [f.message for f in summary.findings]


def test_mutation_set_is_broad() -> None:
    # The floor: at least 10 different defects across chat, session and multiroot,
    # all in the CI tier.
    ci = set(MUTANTS)
    kinds = {MUTANTS[n][0] for n in ci}
    multiroot = {n for n in ci if "directory" in n}
    assert len(ci) >= 10 and kinds == {"chat", "session"} and len(multiroot) >= 3


def _detect(name: str, budget_s: float, tmp_path: Path) -> None:
    # Each campaign runs as `ahp-fuzz run` in a fresh process: the CLI a user runs, and no
    # state shared with the rest of the test session can change what the seed generates.
    kind, profile_name, defect = MUTANTS[name]
    spec = adapter_spec(name)
    out = tmp_path / name
    cmd = [
        sys.executable, "-m", "harness.cli", "run", "--target", spec, "--profile", profile_name,
        "--kinds", kind, "--budget", f"{budget_s:g}s", "--max-findings", "1", "--seed", "1",
        "--probe-every", "25", "--out", str(out), "--quiet",
        "--lane", "hypothesis",  # the CI tier keeps its lane (docs/lanes.md); test_fast_lane.py covers the other
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=budget_s + 120)
    assert proc.returncode == 1, f"{name} ({defect}) not detected in {budget_s:.0f}s:\n{proc.stderr[-2000:]}"
    files = sorted((out / "findings").glob("*.json"))
    assert len(files) == 1, proc.stderr[-2000:]
    finding = load_finding(files[0])
    assert not finding.extra.get("flaky"), finding.extra
    profile = Profile.named(profile_name)
    target = open_target(spec, profile=profile)
    try:
        assert replay(finding, target).reproduced
    finally:
        target.close()
    reference = open_target("reference", profile=profile)
    assert not replay(finding, reference, target_is_model=True).reproduced, (
        f"{name}: the finding also fails on the reference model: {finding.message}"
    )
