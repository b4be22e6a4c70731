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


def _measured(mode: str, max_batch: int | None = None, held: list[int] | None = None) -> dict[str, Any]:
    profile = Profile.named("0.7.0")
    sampler = BranchSampler(mode=mode)
    if sampler.recorder is not None and max_batch is not None:
        recorder = sampler.recorder
        recorder.max_batch = max_batch
        replay = recorder.replay

        def counted_replay() -> int:  # how many calls the recorder held at each replay
            if held is not None:
                held.append(len(recorder.calls))
            return replay()

        recorder.replay = counted_replay  # type: ignore[method-assign]
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


def test_the_recorder_holds_a_bounded_batch_and_measures_the_same() -> None:
    """A batch is replayed as soon as it holds `max_batch` calls (inside the run), so the
    recorder never keeps more than that of the run's states alive; the branches are the same.
    The control: with the default bound, this run's batch outgrew 40 calls before its end."""
    held: list[int] = []
    bounded = _measured("replay", max_batch=40, held=held)
    assert len(held) > 2 and max(held) <= 40, held
    unbounded_held: list[int] = []
    unbounded = _measured("replay", max_batch=10**9, held=unbounded_held)
    assert max(unbounded_held) > 40, unbounded_held
    assert _taken(bounded) == _taken(unbounded)
    assert Model.reduce.__name__ == "reduce"
