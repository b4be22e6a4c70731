"""What a fuzz run is asked to do (`RunConfig`) and what it did (`RunSummary`), in a module of
their own: the chunk bookkeeping (engine/chunks.py) and both lanes (engine/run.py, engine/fast.py)
read them, and `run.py` imports the lanes, so they cannot live there without a circle."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.corpus.baseline import Baseline
from harness.corpus.finding import Finding
from harness.reference import Profile
from harness.spec.verdict import VerdictSwitches
from harness.targets.base import Target

from .control import RunControl

#: The ways a run draws its steps (RunConfig.lane; docs/lanes.md).
LANES: tuple[str, ...] = ("fast", "hypothesis")
#: The command line's default: the lane that found more per CPU-minute on bench/bench_engine.py
#: (bench/results/engine.md, "Lanes"). `RunConfig` itself defaults to the Hypothesis lane.
DEFAULT_LANE = "fast"
#: Chat first: Hypothesis shrinks a sampled kind towards the first entry.
DEFAULT_KINDS: tuple[str, ...] = ("chat", "session", "terminal", "changeset", "annotations", "root", "resourceWatch")


@dataclass
class RunConfig:
    target: Target
    target_spec: str
    target_is_model: bool
    profile: Profile
    seed: int = 0
    budget_s: float | None = 60.0  # None: run exactly max_chunks chunks
    max_chunks: int | None = None
    chunk_examples: int = 25
    max_steps: int = 40
    kinds: tuple[str, ...] = DEFAULT_KINDS
    adversarial_percent: int = 10
    probe_every: int = 1
    max_findings: int | None = None
    database: Path | None = None  # a shared Hypothesis example database (an accelerator only)
    shrink_budget_s: float = 10.0  # time the trace shrinker may spend per finding
    #: Campaigns: classify each valid step's outcome (see Recorder.on_step); the labels go to
    #: `event()` and reward the bandit's arms for new (type, outcome) pairs. (Hypothesis' target
    #: phase on them was measured to narrow the search: bench/results/coverage.md § 5.)
    step_hook: Callable[[str, Any, Any, Any, bool], str | None] | None = None
    #: The run's clock and stop flag (made from `budget_s` when not given). The command line
    #: passes its own, started before the target, so that the signal handlers can reach it.
    control: RunControl | None = None
    heartbeat_s: float = 2.0  # a Progress event at least this often, whatever the target does
    #: Profiles to exercise (engine/arms.py); None: every profile the target supports
    #: (the reference model: 0.7.0, 0.7.0-main, 0.8.0), `profile` first.
    profiles: tuple[Profile, ...] | None = None
    #: A full payload validator (the spec dir's `ActionSchema.problem`); the model's own
    #: required-field table applies either way.
    schema: Callable[[Any], str | None] | None = None
    baseline: Baseline | None = None  # the target's accepted differences (docs/baselines.md)
    cause_cap: int = 1  # findings reported per root cause (harness.causes)
    #: The schema-derived switches recorded in every finding (harness/spec/verdict.py); None:
    #: what this process's checks use ($AHP_SPEC_DIR for the published-schema checks).
    verdict: VerdictSwitches | None = None
    #: Lines emitted as `Notice`s right after `RunStarted` (e.g. which checks are off).
    notices: tuple[str, ...] = ()
    #: "hypothesis": every step a Hypothesis draw (engine/machine.py); "fast": pools filled by
    #: Hypothesis, steps mutated from them with a seeded PRNG (engine/fast.py, docs/lanes.md).
    lane: str = "hypothesis"
    #: Live targets: versions offered besides those with rules (`--offer`, harness/live/versions.py).
    offer: tuple[str, ...] = ()


@dataclass
class RunSummary:
    findings: list[Finding] = field(default_factory=list)
    known_counts: Counter[str] = field(default_factory=Counter)
    examples: int = 0
    steps: int = 0
    chunks: int = 0
    elapsed_s: float = 0.0
    stopped_because: str = "budget"
    status: str = "finished"  # "finished" | "interrupted" | "error"
    kinds: tuple[str, ...] = ()  # the kinds fuzzed (after the target's announcement)
    target_unusable: str | None = None  # the target could not be (re)started mid-run
    extra: dict[str, Any] = field(default_factory=dict)  # lane statistics for report.json
