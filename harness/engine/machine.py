"""The Hypothesis state machine that drives generated sequences through model and target.

One machine run = one channel: it draws a state kind and an initial state, then a sequence of
state-aware actions (with a share of adversarial ones), stepping model and target together via
`Stepper`. A non-`known` violation raises `FindingFailure`, which carries the trace; the campaign
minimises it with the trace shrinker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import event, target
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from harness.corpus.baseline import Baseline
from harness.corpus.cause import root_cause
from harness.corpus.finding import TraceStep
from harness.invariants.base import Violation
from harness.reference import Model
from harness.targets.base import Target

from . import generation
from .control import RunControl
from .stepper import Stepper, StepResult


@dataclass
class Trace:
    kind: str
    initial: dict[str, Any]
    steps: list[TraceStep] = field(default_factory=list)


class FindingFailure(AssertionError):
    """A step broke an invariant (or the target failed): Hypothesis shrinks the run that raised it."""

    def __init__(self, violation: Violation, result: StepResult, trace: Trace, cause: str = ""):
        super().__init__(f"{violation.invariant} [{violation.severity}] {violation.message}")
        self.violation = violation
        self.result = result
        self.trace = trace
        self.cause = cause  # root-cause signature (harness.corpus.cause)


@dataclass
class Recorder:
    """Shared between the campaign and its machines: the latest trace, counters, known hits."""

    on_known: Callable[[Violation, str], None] = lambda v, kind: None
    suppressed: set[tuple[str, str]] = field(default_factory=set)  # (invariant, kind) not to report
    #: Findings reported per root-cause signature, and the most a run reports per signature.
    causes: Counter[str] = field(default_factory=Counter)
    cause_cap: int = 1
    duplicates: int = 0  # shrunk findings dropped: their root cause was already reported
    last_trace: Trace | None = None
    examples: int = 0
    steps: int = 0
    sent: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    #: The first failure of the current chunk, kept here because Hypothesis replays a failing
    #: example once more before re-raising, and a target that hung or crashed may not fail the
    #: same way twice (the campaign reads this, not what Hypothesis re-raises).
    failure: FindingFailure | None = None
    #: Optional outcome hook (campaigns): (kind, before, action, after, malformed) -> a label such
    #: as "chat/delta: no-op: stale turn", or None. Off (None) costs one attribute test per step.
    on_step: Callable[[str, Any, Any, Any, bool], str | None] | None = None
    outcomes_seen: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class MachineConfig:
    model: Model
    target: Target
    target_is_model: bool
    kinds: tuple[str, ...]
    recorder: Recorder
    adversarial_percent: int = 10
    probe_every: int = 1
    max_delay_ms: int = 5_000
    #: The run's `RunControl` (deadline and stop flag), checked before every step.
    control: RunControl | None = None
    baseline: Baseline | None = None  # the target's accepted differences


def build_machine(config: MachineConfig) -> type[RuleBasedStateMachine]:
    """A fresh machine class bound to `config` (no global state)."""
    profile = config.model.profile
    rec = config.recorder

    class DifferentialMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.stepper: Stepper | None = None
            self.trace: Trace | None = None
            self.now_ms = 1_000
            self.max_depth = 0
            self.new_outcomes = 0

        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            if config.control is not None:
                config.control.check()
            kind = data.draw(st.sampled_from(config.kinds), label="kind")
            initial = data.draw(generation.initial_states(kind, profile), label="initial")
            session = config.target.session(kind, initial)
            self.stepper = Stepper(
                kind=kind,
                state=initial,
                model=config.model,
                session=session,
                target=config.target,
                target_is_model=config.target_is_model,
                probe_every=config.probe_every,
                baseline=config.baseline,
            )
            self.trace = rec.last_trace = Trace(kind, initial)
            rec.examples += 1
            event(f"kind {kind}")

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            if config.control is not None:
                config.control.check()  # the budget is a hard limit, not checked per chunk only
            stepper, trace = self.stepper, self.trace
            assert stepper is not None and trace is not None
            kind = stepper.kind
            adversarial = data.draw(st.integers(0, 99), label="dice") < config.adversarial_percent
            if adversarial:
                action = data.draw(generation.adversarial_actions(kind, profile), label="adversarial")
            else:
                action = data.draw(
                    generation.state_aware_actions(kind, stepper.reference, profile), label="action"
                )
            self.now_ms += data.draw(st.integers(0, config.max_delay_ms), label="delay_ms")
            # A schema-invalid action is a probe, whichever lane drew it: the valid lane of a
            # trace holds only schema-valid steps (DESIGN.md, "Findings must be true").
            adversarial = adversarial or config.model.payload_problem(kind, action) is not None
            trace.steps.append(TraceStep(action, self.now_ms, probe=adversarial))
            before = stepper.reference
            target_before = stepper.state
            result = stepper.probe(action, self.now_ms) if adversarial else stepper.step(action, self.now_ms)
            rec.steps += 1
            atype = action.get("type") if isinstance(action, dict) else None
            label = "<adversarial>" if adversarial else atype if isinstance(atype, str) else "<untyped>"
            rec.sent[label] += 1
            if not adversarial and result.expected is not None and result.expected is not before:
                rec.changed[label] += 1
                event(f"changed {label}")
            if adversarial:
                event("adversarial action (probe)")
            elif rec.on_step is not None:
                outcome = rec.on_step(kind, before, action, stepper.reference, result.malformed)
                if outcome is not None:
                    event(outcome)
                    if outcome not in rec.outcomes_seen:
                        rec.outcomes_seen.add(outcome)
                        self.new_outcomes += 1
            self.max_depth = max(self.max_depth, _depth(stepper.reference))
            for v in result.violations:
                if v.severity == "known":
                    config.recorder.on_known(v, kind)
                    continue
                if (v.invariant, kind) in rec.suppressed:
                    continue
                cause = root_cause(v.invariant, kind, action, result.expected, result.observed,
                                   before=(before, target_before), message=v.message)
                if rec.causes[cause] >= rec.cause_cap:
                    continue  # this root cause was reported as often as the run allows
                failure = FindingFailure(v, result, trace, cause)
                if rec.failure is None:
                    rec.failure = failure
                raise failure

        def teardown(self) -> None:
            # Coverage-guided search climbs towards deeper states (HypoFuzz-style target()).
            target(float(self.max_depth), label="state depth")
            if rec.on_step is not None:
                target(float(self.new_outcomes), label="new (type, outcome) pairs")
            if self.stepper is not None:
                self.stepper.session.close()

    return DifferentialMachine


def _depth(state: dict[str, Any]) -> int:
    """A cheap 'how deep is this state' measure for `target()`: turns, parts and list entries."""
    n = 0
    for v in state.values():
        if isinstance(v, list):
            n += len(v)
        elif isinstance(v, dict):
            parts = v.get("responseParts")
            if isinstance(parts, list):
                n += len(parts)
    return n
