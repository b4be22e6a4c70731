"""The mutation check: copies of the reference model, each with one guard or transition broken,
served through the adapter protocol in a real subprocess. The fuzzer must find every one within
a fixed budget, and each finding must replay — failing on the mutant, clean on the reference.

Deterministic: fixed seed, and each run stops at its first finding (the budget only bounds a
regression in detection; it is not part of a passing run's behaviour).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from harness.corpus.replay import replay
from harness.engine.campaign import RunConfig, run_campaign
from harness.engine.events import EventBus
from harness.reference import Profile
from harness.targets.base import open_target

from .mutants import MUTANTS

MUTANTS_FILE = Path(__file__).resolve().parent / "mutants.py"
BUDGET_S = 60.0


def adapter_spec(name: str) -> str:
    argv = [sys.executable, "-m", "harness.targets.reference_adapter", "--model", f"{MUTANTS_FILE}:{name}"]
    return "adapter:" + shlex.join(argv)


@pytest.mark.fuzz
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_fuzzer_detects_mutant(name: str) -> None:
    kind, profile_name, defect = MUTANTS[name]
    profile = Profile.named(profile_name)
    spec = adapter_spec(name)
    target = open_target(spec, profile=profile)
    try:
        config = RunConfig(
            target=target, target_spec=spec, target_is_model=False, profile=profile, seed=1,
            budget_s=BUDGET_S, kinds=(kind,), max_findings=1, probe_every=25,
        )
        summary = run_campaign(config, EventBus())
        assert summary.findings, f"{name} ({defect}) not detected in {BUDGET_S:.0f}s"
        finding = summary.findings[0]
        assert not finding.extra.get("flaky"), finding.extra
        assert replay(finding, target).reproduced
    finally:
        target.close()
    reference = open_target("reference", profile=profile)
    assert not replay(finding, reference, target_is_model=True).reproduced, (
        f"{name}: the finding also fails on the reference model: {finding.message}"
    )
