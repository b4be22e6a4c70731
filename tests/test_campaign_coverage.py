"""Record-and-replay branch coverage (harness/campaign/branches.py) against plain tracing."""

from __future__ import annotations

from typing import Any

import pytest

from harness.campaign import branches
from harness.campaign.branches import BranchSampler
from harness.campaign.outcomes import OutcomeMatrix
from harness.campaign.worker import _step_hook
from harness.engine.events import EventBus
from harness.engine.run import RunConfig, run_campaign
from harness.reference import Profile
from harness.reference.dispatch import Model
from harness.targets.reference import ReferenceTarget

KINDS = ("chat", "session")


def _measured(mode: str, *, worker_hook: bool = False, held: list[int] | None = None) -> dict[str, Any]:
    """The branches a small reference run takes, measured by `mode`; `worker_hook`: with the
    campaign worker's step hook (outcome matrix, bounded batch); `held`: the recorded calls the
    recorder held at each of its replays."""
    profile = Profile.named("0.7.0")
    sampler = BranchSampler(mode=mode)
    if held is not None and sampler.recorder is not None:
        recorder, replay = sampler.recorder, sampler.recorder.replay

        def counted_replay() -> int:
            held.append(len(recorder.calls))
            return replay()

        recorder.replay = counted_replay  # type: ignore[method-assign]
    hook = _step_hook(OutcomeMatrix(profile.version), sampler) if worker_hook else None
    config = RunConfig(target=ReferenceTarget(profile), target_spec="reference", target_is_model=True,
                       profile=profile, seed=11, budget_s=None, max_chunks=1, chunk_examples=3, max_steps=12,
                       kinds=KINDS, step_hook=hook)
    sampler.start()
    try:
        summary = run_campaign(config, EventBus())
    finally:
        sampler.stop()
    assert summary.steps > 0
    # the reference against itself: a finding would be the measuring's (a replay inside a
    # watched reducer call is counted as that call's clock reads: INV-002.clock)
    assert summary.findings == [], [f.invariant for f in summary.findings]
    return sampler.summary(with_files=True)


def _taken(summary: dict[str, Any]) -> dict[str, int]:
    return {name: f["coveredBranches"] for name, f in summary["files"].items()}


def _reduce_only() -> dict[str, int]:
    real = branches.RECORDED
    branches.RECORDED = ("reduce",)  # type: ignore[misc]
    try:
        return _taken(_measured("replay"))
    finally:
        branches.RECORDED = real  # type: ignore[misc]


def test_replay_measures_the_reducers_like_the_tracer_does() -> None:
    traced = _measured("trace")
    replayed = _measured("replay")
    for name in branches.RECORDED:  # the recording wrappers are gone again
        assert getattr(Model, name).__name__ == name
    t, r = _taken(traced), _taken(replayed)
    assert replayed["coveredBranches"] > 0
    # what the engine asks the model besides `reduce` (`wire_problem`, `owner`): not counted when
    # only `reduce` was replayed (7 branches of dispatch.py then, 14 now, 18 traced)
    assert r["harness/reference/dispatch.py"] > _reduce_only()["harness/reference/dispatch.py"]
    for name in ("harness/reference/turns.py", "harness/reference/tool_calls.py", "harness/reference/session.py",
                 "harness/reference/response_parts.py"):
        assert r[name] == t[name], name  # reached only through the Model's methods: identical
    for name in t:
        assert r.get(name, 0) <= t[name], name  # never more than the run really executed


def test_a_worker_replays_a_bounded_batch_between_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's step hook replays the recorded batch once it holds `MAX_BATCH` calls, so the
    recorder keeps at most that (and one step's calls) of the run's states alive; the branches
    are the same, and nothing is reported. The control: without the hook this run's batch grows
    far beyond the bound (369 calls)."""
    monkeypatch.setattr(branches, "MAX_BATCH", 40)
    held: list[int] = []
    bounded = _measured("replay", worker_hook=True, held=held)
    assert len(held) > 2 and max(held) < 80, held
    control: list[int] = []
    unbounded = _measured("replay", held=control)
    assert max(control) > 80, control
    assert _taken(bounded) == _taken(unbounded)


def test_a_replay_builds_again_the_models_the_run_built() -> None:
    # the lanes' models are built inside the run: `tables_for` picks each profile's rule
    # handlers there, and the replay counted none of it before `__init__` was recorded
    assert "__init__" in branches.RECORDED
    sampler = branches.BranchSampler(mode="replay")
    sampler.start()
    try:
        Model(Profile.named("1.0.0"), check_payloads=True)
        Model(Profile.named("0.6.0"))
        built = [c for c in sampler.recorder.calls if c[0] == "__init__"] if sampler.recorder else []
    finally:
        sampler.stop()
    assert len(built) == 2 and built[0][3] == {"check_payloads": True}
    files = sampler.summary(with_files=True)["files"]
    dispatch = files["harness/reference/dispatch.py"]
    # the loop over RULE_HANDLERS in `tables_for`, both ways for a rule (1.0.0 on, 0.6.0 off)
    assert [76, 77] not in dispatch["missingBranches"] and [76, 75] not in dispatch["missingBranches"]


def test_the_reducer_path_figure_counts_the_modules_a_step_runs_and_lists_the_others() -> None:
    """The package figure counts modules no reducer step runs (the wire codec, the collection
    draft's helpers, the CLI's profile choice): 0 % in every run, so the figure read as behaviours
    never reached. `reducerPath` counts the others and names those."""
    import harness.reference.codec
    import harness.reference.collections
    import harness.reference.profile_rule  # noqa: F401  (imported: their modules are measured)
    from harness.report.coverage import reducer_path

    summary = _measured("replay")
    path = summary["reducerPath"]
    off = {"harness/reference/codec.py", "harness/reference/collections.py", "harness/reference/profile_rule.py"}
    assert off <= set(path["offPath"])
    files = summary["files"]
    on = [f for name, f in files.items() if name not in path["offPath"]]
    assert path["numBranches"] == sum(f["numBranches"] for f in on) < summary["numBranches"]
    assert path["coveredBranches"] == summary["coveredBranches"]  # what the run took is all on the path
    assert "harness/reference/tool_calls.py" not in path["offPath"] and "harness/reference/dispatch.py" not in path["offPath"]
    # and a branch taken in a module off the path would not be counted in it
    fake = {**files, "harness/reference/codec.py": {**files["harness/reference/codec.py"], "coveredBranches": 4}}
    assert reducer_path(fake)["coveredBranches"] == path["coveredBranches"]
