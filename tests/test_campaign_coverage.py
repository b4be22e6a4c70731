"""Record-and-replay branch coverage (harness/campaign/branches.py) against plain tracing."""

from __future__ import annotations

from typing import Any

from harness.campaign.branches import BranchSampler
from harness.engine.events import EventBus
from harness.engine.run import RunConfig, run_campaign
from harness.reference import Profile
from harness.reference.dispatch import Model
from harness.targets.reference import ReferenceTarget

KINDS = ("chat", "session")


def _measured(mode: str) -> dict[str, Any]:
    profile = Profile.named("0.7.0")
    sampler = BranchSampler(mode=mode)
    config = RunConfig(target=ReferenceTarget(profile), target_spec="reference", target_is_model=True,
                       profile=profile, seed=11, budget_s=None, max_chunks=1, chunk_examples=3, max_steps=12,
                       kinds=KINDS)
    sampler.start()
    try:
        summary = run_campaign(config, EventBus())
    finally:
        sampler.stop()
    assert summary.steps > 0
    return sampler.summary(with_files=True)


def _taken(summary: dict[str, Any]) -> dict[str, int]:
    return {name: f["coveredBranches"] for name, f in summary["files"].items()}


def test_replay_measures_the_reducers_like_the_tracer_does() -> None:
    traced = _measured("trace")
    replayed = _measured("replay")
    assert Model.reduce.__name__ == "reduce"  # the recording wrapper is gone again
    t, r = _taken(traced), _taken(replayed)
    assert replayed["coveredBranches"] > 0
    for name in ("harness/reference/turns.py", "harness/reference/tool_calls.py", "harness/reference/session.py",
                 "harness/reference/response_parts.py"):
        assert r[name] == t[name], name  # reached only through Model.reduce: identical
    for name in t:
        assert r.get(name, 0) <= t[name], name  # never more than the run really executed
