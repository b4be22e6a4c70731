"""A fuzz run: chunks of Hypothesis state-machine runs until the budget is spent.

Each chunk runs `chunk_examples` machine runs under a seed derived from the run's seed and the
chunk number, so a run is reproducible given its seed and the number of chunks it completed
(and in a fixed-size run such as the pytest tier, fully deterministic). When a chunk finds a
failure, the campaign turns the trace into a `Finding`, minimises it with the trace shrinker
(bounded by `shrink_budget_s`), replays it once to confirm, hands it to the event stream (the
corpus writer saves it at once), suppresses that invariant for that state kind, and goes on.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import run_state_machine_as_test

from harness.corpus.finding import Finding
from harness.engine.replay import replay
from harness.invariants.base import Violation
from harness.invariants.registry import REGISTRY
from harness.reference import Model, Profile
from harness.spec.versions import KINDS
from harness.targets.base import Target

from .events import EventBus, FindingFound, KnownSeen, Progress, RunFinished, RunStarted
from .machine import FindingFailure, MachineConfig, Recorder, build_machine
from .shrink import TraceShrinker

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
    #: Campaigns: classify each valid step's outcome (see Recorder.on_step) and let Hypothesis
    #: hill-climb on new (type, outcome) pairs in its target phase.
    step_hook: Callable[[str, Any, Any, Any, bool], str | None] | None = None


@dataclass
class RunSummary:
    findings: list[Finding] = field(default_factory=list)
    known_counts: Counter[str] = field(default_factory=Counter)
    examples: int = 0
    steps: int = 0
    chunks: int = 0
    elapsed_s: float = 0.0
    stopped_because: str = "budget"


def chunk_seed(run_seed: int, chunk: int) -> int:
    digest = hashlib.sha256(f"ahp-fuzz:{run_seed}:{chunk}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def run_campaign(config: RunConfig, bus: EventBus) -> RunSummary:
    for k in config.kinds:
        if k not in KINDS:
            raise ValueError(f"unknown state kind {k!r} (want one of {', '.join(KINDS)})")
    model = Model(config.profile)
    summary = RunSummary()
    seen_known: set[tuple[str, str]] = set()

    def on_known(v: Violation, kind: str) -> None:
        summary.known_counts[v.invariant] += 1
        key = (v.invariant, kind)
        first = key not in seen_known
        seen_known.add(key)
        if first:
            inv = REGISTRY.get(v.invariant)
            bus.emit(KnownSeen(v.invariant, kind, v.message, inv.known_issue if inv else None, True))

    recorder = Recorder(on_known=on_known, on_step=config.step_hook)
    machine_cfg = MachineConfig(
        model=model,
        target=config.target,
        target_is_model=config.target_is_model,
        kinds=config.kinds,
        recorder=recorder,
        adversarial_percent=config.adversarial_percent,
        probe_every=config.probe_every,
    )
    bus.emit(RunStarted(config.target_spec, config.profile.label, config.seed, config.budget_s, config.kinds))
    t0 = time.monotonic()
    chunk = 0
    database = DirectoryBasedExampleDatabase(str(config.database)) if config.database else None
    while True:
        elapsed = time.monotonic() - t0
        if config.budget_s is not None and elapsed >= config.budget_s:
            summary.stopped_because = "budget"
            break
        if config.max_chunks is not None and chunk >= config.max_chunks:
            summary.stopped_because = "chunks"
            break
        if config.max_findings is not None and len(summary.findings) >= config.max_findings:
            summary.stopped_because = "max findings"
            break
        machine = build_machine(machine_cfg)
        run_settings = settings(
            max_examples=config.chunk_examples,
            stateful_step_count=config.max_steps,
            deadline=None,
            database=database,
            derandomize=False,
            report_multiple_bugs=False,
            verbosity=Verbosity.quiet,
            # Hypothesis finds; the trace shrinker (engine/shrink.py) minimises, bounded in time.
            phases=([Phase.reuse] if database else []) + [Phase.generate]
            + ([Phase.target] if config.step_hook else []),
            suppress_health_check=list(HealthCheck),
        )
        try:
            run_state_machine_as_test(seed(chunk_seed(config.seed, chunk))(machine), settings=run_settings)
        except FindingFailure as failure:
            found = _finding_from(failure, config, chunk)
            shrinker = TraceShrinker(
                config.target, target_is_model=config.target_is_model, budget_s=config.shrink_budget_s
            )
            finding = shrinker.shrink(found)
            finding.extra["shrink"] = {
                "stepsFound": len(found.steps), "stepsShrunk": len(finding.steps), "replays": shrinker.attempts,
            }
            reproduced = replay(finding, config.target, target_is_model=config.target_is_model).reproduced
            if not reproduced:
                finding.extra["flaky"] = True
            recorder.suppressed.add((finding.invariant, finding.kind))
            summary.findings.append(finding)
            bus.emit(FindingFound(finding, reproduced))
        chunk += 1
        summary.chunks = chunk
        summary.examples, summary.steps = recorder.examples, recorder.steps
        bus.emit(
            Progress(
                time.monotonic() - t0, recorder.examples, recorder.steps, len(summary.findings),
                sum(summary.known_counts.values()), chunk,
            )
        )
    summary.elapsed_s = time.monotonic() - t0
    summary.examples, summary.steps = recorder.examples, recorder.steps
    coverage = {t: {"sent": n, "changed": recorder.changed[t]} for t, n in sorted(recorder.sent.items())}
    bus.emit(
        RunFinished(
            summary.elapsed_s, summary.examples, summary.steps, summary.findings,
            dict(summary.known_counts), coverage, summary.stopped_because,
            {"chunks": summary.chunks, "seed": config.seed},
        )
    )
    return summary


def _finding_from(failure: FindingFailure, config: RunConfig, chunk: int) -> Finding:
    v = failure.violation
    trace = failure.trace
    inv = REGISTRY.get(v.invariant)
    return Finding(
        invariant=v.invariant,
        severity=v.severity,
        title=inv.title if inv else v.invariant.replace("-", " ").lower(),
        message=v.message,
        profile=config.profile.label,
        target=config.target_spec,
        kind=trace.kind,
        initial=trace.initial,
        steps=list(trace.steps),
        failing_step=len(trace.steps) - 1,
        expected=failure.result.expected,
        observed=failure.result.observed if failure.result.observed is not None else failure.result.error,
        known_issue=inv.known_issue if inv else None,
        seed=config.seed,
        extra={"chunk": chunk},
    )
