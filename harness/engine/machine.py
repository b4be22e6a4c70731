"""The Hypothesis state machine that drives generated sequences through model and target.

One machine run = one arm (engine/arms.py): a profile lane and either one channel (a state kind
and an initial state) or a group (a session with 1–3 of its chats, actions routed by channel, one
`Stepper` per channel, the other channels' states handed to the cross-channel checks). Then a
sequence of state-aware actions (with a share of adversarial ones), stepping model and target
together. A non-`known` violation raises `FindingFailure`, which carries the trace; the campaign
minimises it with the trace shrinker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import event, target
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from harness.causes import (
    NOTES,
    PRIORITY,
    SEVERITY_RANK,
    Cause,
    StepView,
    Witnesses,
    apply_differences,
    armed,
    violation_causes,
)
from harness.corpus.baseline import Baseline
from harness.corpus.finding import TraceStep
from harness.invariants.base import Step, Violation
from harness.invariants.registry import REGISTRY, check_step
from harness.reference import Model
from harness.targets.base import Target

from . import generation
from .arms import GROUP, Arm, Lane
from .control import RunControl
from .probes import ProbeRations
from .retired import ValueClasses, action_label
from .stepper import TARGET_TIMEOUT, Stepper, StepResult


@dataclass
class Trace:
    kind: str
    initial: dict[str, Any]
    steps: list[TraceStep] = field(default_factory=list)
    profile: str | None = None  # the lane's profile (a run exercises every profile it can)
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. {"group": …} of a multi-channel run
    target: Any = None  # the lane's target, which replays and shrinks the finding


class FindingFailure(AssertionError):
    """A step broke an invariant (or the target failed): Hypothesis shrinks the run that raised it."""

    def __init__(self, violation: Violation, result: StepResult, trace: Trace, cause: Cause | None = None):
        super().__init__(f"{violation.invariant} [{violation.severity}] {violation.message}")
        self.violation = violation
        self.result = result
        self.trace = trace
        self.cause = cause  # the root cause it shows (harness.causes)


@dataclass
class Recorder:
    """Shared between the campaign and its machines: the latest trace, counters, known hits."""

    on_known: Callable[[Violation, str], None] = lambda v, kind: None
    suppressed: set[tuple[str, str]] = field(default_factory=set)  # (invariant, kind) not to report
    #: Findings reported per root-cause id, and the most a run reports per cause.
    causes: Counter[str] = field(default_factory=Counter)
    cause_cap: int = 1
    #: Every violation the run saw, counted against the cause it witnesses (reported or not).
    witnesses: dict[str, Witnesses] = field(default_factory=dict)
    #: Called when a violation of an already reported cause was seen (the finding is not raised
    #: again): (cause, its witnesses, whether an invariant, type or kind was new).
    on_cause_seen: Callable[[Cause, Witnesses, bool], None] = lambda c, w, new: None
    duplicates: int = 0  # violations not raised: their root cause was already reported
    last_trace: Trace | None = None
    examples: int = 0
    steps: int = 0
    sent: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    #: Optional outcome hook (campaigns): (kind, before, action, after, malformed) -> a label such
    #: as "chat/delta: no-op: stale turn", or None. Off (None) costs one attribute test per step.
    on_step: Callable[[str, Any, Any, Any, bool], str | None] | None = None
    outcomes_seen: set[str] = field(default_factory=set)
    #: The bandit's evidence (engine/arms.py): (kind, type, outcome) pairs seen in the run, and
    #: per arm the examples run and the pairs it saw first.
    pairs_seen: set[tuple[str, str, str]] = field(default_factory=set)
    arm_examples: Counter[Arm] = field(default_factory=Counter)
    arm_new_pairs: Counter[Arm] = field(default_factory=Counter)
    #: The first failure of the current chunk, kept here because Hypothesis replays a failing
    #: example once more before re-raising, and a target that hung or crashed may not fail the
    #: same way twice (the campaign reads this, not what Hypothesis re-raises).
    failure: FindingFailure | None = None
    #: Value classes a target hung on, never the kind (engine/retired.py).
    retired: ValueClasses = field(default_factory=ValueClasses)


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
    #: Profiles the run exercises (engine/arms.py); empty: one lane of `model` and `target`.
    lanes: tuple[Lane, ...] = ()
    #: The (kind, lane) arms of this chunk, repeated by weight; empty: every kind on lane 0.
    arms: tuple[Arm, ...] = ()
    #: Run-wide probe rations (engine/probes.py); None: every probe every `probe_every` steps.
    rations: ProbeRations | None = None
    #: The spec folder's action schema (`Stepper.folder_schema`: foreign probes of a lane of
    #: another version); None: no spec folder.
    schema: Callable[[Any], str | None] | None = None


def build_machine(config: MachineConfig) -> type[RuleBasedStateMachine]:
    """A fresh machine class bound to `config` (no global state)."""
    rec = config.recorder
    # Hypothesis runs an example again and needs the same answers: not the ramp or the envelope
    steady = rec.retired.steady()
    lanes = config.lanes or (Lane(config.model.profile, config.model, config.target),)
    arms: tuple[Arm, ...] = config.arms or tuple((k, 0) for k in config.kinds)

    class DifferentialMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.channels: list[_Channel] = []
            self.lane = lanes[0]
            self.arm: Arm = arms[0]
            self.order: list[tuple[int, int]] = []  # multi-channel runs: (channel, step index)
            self.group_uri: str | None = None
            self.now_ms = 1_000
            self.adversarial_percent = config.adversarial_percent
            self.delay = st.integers(0, config.max_delay_ms)
            self.max_depth = 0
            self.new_outcomes = 0

        @property
        def stepper(self) -> Stepper | None:
            return self.channels[0].stepper if self.channels else None

        def _open(self, kind: str, initial: dict[str, Any]) -> _Channel:
            lane = self.lane
            stepper = Stepper(
                kind=kind,
                state=initial,
                model=lane.model,
                session=lane.target.session(kind, initial),
                target=lane.target,
                target_is_model=config.target_is_model,
                probe_every=config.probe_every,
                baseline=config.baseline,
                rations=config.rations,
                folder_schema=config.schema,
                retired=steady,
            )
            return _Channel(stepper, Trace(kind, initial, profile=lane.profile.label, target=lane.target))

        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            if config.control is not None:
                config.control.check()
            self.arm = data.draw(st.sampled_from(arms), label="arm") if len(arms) > 1 else arms[0]
            kind, lane_index = self.arm
            self.lane = lanes[lane_index]
            profile = self.lane.profile
            if kind == GROUP:
                group = data.draw(generation.channel_groups(profile), label="group")
                self.group_uri = group.session_uri
                self.channels = [self._open("session", group.session)]
                self.channels += [self._open("chat", c) for c in group.chats]
            else:
                initial = data.draw(generation.initial_states(kind, profile), label="initial")
                self.channels = [self._open(kind, initial)]
            rec.last_trace = self.channels[0].trace
            rec.examples += 1
            rec.arm_examples[self.arm] += 1
            event(f"arm {kind} {profile.label}")

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            if config.control is not None:
                config.control.check()  # the budget is a hard limit, not checked per chunk only
            lane = self.lane
            group = len(self.channels) > 1
            # One draw per step (channel, dice, action, delay): each `DataObject.draw` has a
            # fixed cost of its own, paid four times per step before.
            index, adversarial, action, delay = data.draw(_step_choice(self), label="step")
            channel = self.channels[index]
            stepper, trace = channel.stepper, channel.trace
            kind = stepper.kind
            if steady(kind, action):
                return  # a value class the target hung on: not sent again (the kind goes on)
            self.now_ms += delay
            # A schema-invalid action is a probe, whichever lane drew it: the valid lane of a
            # trace holds only schema-valid steps (DESIGN.md, "Findings must be true").
            adversarial = adversarial or lane.model.payload_problem(kind, action) is not None
            trace.steps.append(TraceStep(action, self.now_ms, probe=adversarial))
            if group:
                self.order.append((index, len(trace.steps) - 1))
            before = stepper.reference
            target_before = stepper.state
            if adversarial:
                result = stepper.probe(action, self.now_ms)
            elif group:
                result = stepper.step(action, self.now_ms, **self._cross_channel(index))
            else:
                result = stepper.step(action, self.now_ms)
            rec.steps += 1
            rec.retired.saw(kind, action, any(v.invariant == TARGET_TIMEOUT for v in result.violations))
            label = action_label(action, adversarial)
            rec.sent[label] += 1
            changed = not adversarial and result.expected is not None and result.expected is not before
            if changed:
                rec.changed[label] += 1
                event(f"changed {label}")
            if adversarial:
                event("adversarial action (probe)")
            outcome = None
            if not adversarial and rec.on_step is not None:
                outcome = rec.on_step(kind, before, action, stepper.reference, result.malformed)
                if outcome is not None:
                    event(outcome)
                    if outcome not in rec.outcomes_seen:
                        rec.outcomes_seen.add(outcome)
                        self.new_outcomes += 1
            # With an outcome hook the bandit is rewarded for new (type, outcome) pairs, guards included.
            pair = (kind, label, outcome or ("changed" if changed else "malformed" if result.malformed else "same"))
            if pair not in rec.pairs_seen:
                rec.pairs_seen.add(pair)
                rec.arm_new_pairs[self.arm] += 1
            self.max_depth = max(self.max_depth, _depth(stepper.reference))
            if result.violations:
                self._judge(result, channel, StepView(
                    kind, action, target_before if adversarial else before, target_before,
                    result.expected, result.observed, probe=adversarial,
                ), label, index)

        def _judge(self, result: StepResult, channel: _Channel, view: StepView, label: str, index: int) -> None:
            """Raise a finding for the first root cause of the step not yet reported (`judge_step`)."""
            context = self._cross_channel(index) if len(self.channels) > 1 else {}
            judged = judge_step(rec, channel.stepper, result, view, label, self.now_ms, context)
            if judged is None:
                return
            cause, v = judged
            failure = FindingFailure(v, result, self._finding_trace(channel, index), cause)
            if rec.failure is None:
                rec.failure = failure
            raise failure

        def _action_strategy(self, index: int, adversarial: bool) -> st.SearchStrategy[Any]:
            profile = self.lane.profile
            stepper = self.channels[index].stepper
            if adversarial:
                return generation.adversarial_actions(stepper.kind, profile)
            dirs = self._session_directories() if index > 0 and stepper.kind == "chat" else None
            return generation.state_aware_actions(stepper.kind, stepper.reference, profile, dirs)

        def _session_directories(self) -> tuple[str, ...]:
            dirs = self.channels[0].stepper.reference.get("workingDirectories")
            return tuple(d for d in dirs if isinstance(d, str)) if isinstance(dirs, list) else ()

        def _cross_channel(self, index: int) -> dict[str, Any]:
            """The other channels' states, for the cross-channel checks of this step."""
            if index == 0:
                return {"chats": tuple(c.stepper.reference for c in self.channels[1:])}
            return {"session": self.channels[0].stepper.reference}

        def _finding_trace(self, channel: _Channel, index: int = 0) -> Trace:
            """The failing channel's own trace; a multi-channel run adds the whole group as
            `extra["group"]` (reducers are per channel, so the channel's steps replay alone) and
            records on the failing step the other channels as the cross-channel checks saw them
            (`TraceStep.context`), so those checks judge the replay as they judged the run."""
            if len(self.channels) == 1:
                return channel.trace
            return group_trace([c.trace for c in self.channels], self.channels.index(channel), self.order,
                               self.group_uri, self._cross_channel(index))

        def teardown(self) -> None:
            # Coverage-guided search climbs towards deeper states (HypoFuzz-style target()).
            target(float(self.max_depth), label="state depth")
            if rec.on_step is not None:
                target(float(self.new_outcomes), label="new (type, outcome) pairs")
            for c in self.channels:
                c.stepper.session.close()

    return DifferentialMachine


@st.composite
def _step_choice(draw: st.DrawFn, machine: Any) -> tuple[int, bool, Any, int]:
    """The choices of one step: channel, adversarial dice, action, clock delay."""
    n = len(machine.channels)
    index = draw(st.integers(0, n - 1)) if n > 1 else 0
    adversarial = draw(_DICE) < machine.adversarial_percent
    action = draw(machine._action_strategy(index, adversarial))
    return index, adversarial, action, draw(machine.delay)


_DICE: Final = st.integers(0, 99)


def judge_step(
    rec: Recorder,
    stepper: Stepper,
    result: StepResult,
    view: StepView,
    label: str,
    now_ms: int,
    context: dict[str, Any],
) -> tuple[Cause, Violation] | None:
    """Sign each violation of a step with its root causes (harness/causes/signing.py) and count it
    as a witness; the (cause, violation) to report — the first cause not yet reported, by
    `PRIORITY`, told by its most severe violation — or None. A cause already reported is
    accepted for the rest of the run: a quieter cause on the same step still surfaces, with
    the violation its own differences give (`isolated`). Both lanes judge their steps here."""
    kind = view.kind
    rejudge = armed(view, stepper.probe_reducer(), now_ms, stepper.profile, context)
    by_cause: dict[str, tuple[Cause, list[Violation]]] = {}
    for v in result.violations:
        if v.severity == "known":
            rec.on_known(v, kind)
            continue
        if (v.invariant, kind) in rec.suppressed:
            continue
        for cause in violation_causes(view, v, rejudge):
            if cause.id in NOTES:  # a fidelity class: one note for the run, not a finding
                rec.on_known(Violation(NOTES[cause.id], "known", f"{cause.summary}: {v.message}"), kind)
                continue
            by_cause.setdefault(cause.id, (cause, []))[1].append(v)
    counting = rec.failure is None  # Hypothesis re-runs a failing example: count once
    raised: tuple[Cause, list[Violation]] | None = None
    for cid, (cause, found) in by_cause.items():
        w = rec.witnesses.setdefault(cid, Witnesses())
        new = False
        if counting:
            for v in found:
                new = w.add(v.invariant, label, kind) or new
        if rec.causes[cid] >= rec.cause_cap:
            rec.duplicates += counting
            if counting:
                rec.on_cause_seen(cause, w, new)
        elif raised is None or _first_cause(cause, raised[0]):
            raised = (cause, found)
    if raised is None:
        return None
    cause, found = raised
    if len(by_cause) > 1 and not view.probe and view.differences(cause):
        # told in its own words, by a check that fires on the step as it is (so a replay sees it)
        fired = {v.invariant for v in found}
        found = [v for v in isolated(stepper, view, cause, now_ms, context) if v.invariant in fired] or found
    # the most severe; of equals, a check of the step itself before a probe's (a probe re-runs
    # the target's reducer: the step's own check is the direct evidence)
    return cause, min(found, key=lambda x: (SEVERITY_RANK.get(x.severity, 9), _is_probe(x.invariant)))


def _is_probe(invariant: str) -> bool:
    inv = REGISTRY.get(invariant)
    return inv is not None and inv.probe


def isolated(stepper: Stepper, view: StepView, cause: Cause, now_ms: int, context: dict[str, Any]) -> list[Violation]:
    """The violations the step shows with only `cause`'s differences from the model's state
    (the others accepted, as a baseline would): what tells that cause, in its own words."""
    if not isinstance(view.expected, dict):
        return []
    after = apply_differences(view.expected, view.differences(cause))
    step = Step(kind=view.kind, before=view.before, action=view.action, after=after, now_ms=now_ms,
                profile=stepper.profile, reference_after=view.expected, **context)
    return [v for v in check_step(step, probes=False) if v.severity != "known"]


def group_trace(
    traces: list[Trace], failing: int, order: list[tuple[int, int]], session: Any, context: dict[str, Any],
) -> Trace:
    """A multi-channel group's finding: the failing channel's own trace (reducers are per
    channel, so its steps replay alone), the whole group as `extra["group"]`, and on the failing
    step the other channels as the cross-channel checks saw them (`TraceStep.context`), so those
    checks judge the replay as they judged the run. Both lanes record group findings so."""
    group = {
        "session": session,
        "channels": [{"kind": t.kind, "initial": t.initial} for t in traces],
        "steps": [{"channel": i, **traces[i].steps[j].to_json()} for i, j in order],
        "failingChannel": failing,
    }
    t = traces[failing]
    steps = list(t.steps)
    last = steps[-1]
    if not last.probe:
        ctx = {"session": context["session"]} if "session" in context else {"chats": list(context["chats"])}
        steps[-1] = TraceStep(last.action, last.now_ms, last.probe, ctx)
    return Trace(t.kind, t.initial, steps, t.profile, {"group": group}, t.target)


def _first_cause(a: Cause, b: Cause) -> bool:
    """`a` signs a step before `b` (harness.causes.PRIORITY)."""
    return PRIORITY.index(a.transformation) < PRIORITY.index(b.transformation)


@dataclass
class _Channel:
    stepper: Stepper
    trace: Trace


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
