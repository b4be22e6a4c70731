"""Replay a finding exactly: same profile, initial state, actions and clock values.

The trace goes through the same `Stepper` the fuzz engine uses, so the same checks judge it, with
the cross-channel context a multi-channel run recorded on the failing step. A finding
*reproduces* when its invariant fires again at some step of the trace — and, for a finding with a
root cause (harness/causes/), fires there as a witness of that same cause (one of the
step's causes: a louder one on the same step does not hide it): an earlier step where the
invariant fires for another cause is not the finding (the shrinker, which replays
candidates, then keeps the cause it was asked to minimise). For a finding that is not itself
`known`, the firing must be a failing one: a `known` firing (a listed upstream issue the
reference shows too, a difference the target's baseline accepts) does not reproduce it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.causes import FAILURES, Cause, StepView, armed, violation_causes
from harness.corpus.baseline import Baseline
from harness.corpus.finding import Finding
from harness.diff import json_diff
from harness.invariants.base import Violation
from harness.reference import Model, Profile
from harness.targets.base import Target

from .retired import ValueClasses
from .stepper import Stepper


@dataclass
class ReplayResult:
    reproduced: bool
    step: int | None  # index of the first step where the finding's invariant fired
    violations: list[tuple[int, Violation]] = field(default_factory=list)  # everything that fired
    diff: list[str] = field(default_factory=list)  # expected vs observed at that step, if any
    malformed: int = 0  # steps the reference model found schema-invalid (probes)
    expected: Any = None  # reference state after the hit step
    observed: Any = None  # target state (or error text) after the hit step
    message: str = ""  # the invariant's message at the hit step
    cause: Cause | None = None  # the root cause the hit shows (when the finding has one)
    #: Steps where the invariant fired for another cause than the finding's.
    other_causes: list[tuple[int, Cause | None]] = field(default_factory=list)

    def summary(self, finding: Finding) -> str:
        if self.reproduced:
            why = f" ({self.cause.summary})" if self.cause is not None else ""
            return f"reproduced: {finding.invariant} fires at step {self.step}{why}"
        if self.other_causes:
            i, c = self.other_causes[0]
            what = c.summary if c is not None else "a difference inherited from an earlier step"
            return (f"did not reproduce: {finding.invariant} fires at step {i}, but for another cause "
                    f"({what})")
        others = sorted({v.invariant for _, v in self.violations})
        extra = f" (other checks fired: {', '.join(others)})" if others else ""
        return f"did not reproduce: {finding.invariant} does not fire{extra}"


def replay(
    finding: Finding,
    target: Target,
    *,
    target_is_model: bool = False,
    schema: Callable[[Any], str | None] | None = None,
    baseline: Baseline | None = None,
    profile: Profile | None = None,
    retired: ValueClasses | None = None,
) -> ReplayResult:
    """Replay under the finding's profile (or `profile`, the `--profile` override), with the
    model's payload checks on (and the spec's `schema`, when given) and the target's
    `baseline` applied, as in the run. Inside a run (shrinking, confirming), `retired` is the
    run's: the probe checks skip what the run skips (a class the target hung on, an action
    above the size ramp's cap), as the run's own did — each one a timeout otherwise."""
    model = Model(profile or Profile.named(finding.profile), check_payloads=True, schema=schema)
    session = target.session(finding.kind, finding.initial)
    stepper = Stepper(
        kind=finding.kind,
        state=finding.initial,
        model=model,
        session=session,
        target=target,
        target_is_model=target_is_model,
        probe_every=1,
        baseline=baseline,
        retired=retired,
    )
    fired: list[tuple[int, Violation]] = []
    hit: int | None = None
    diff: list[str] = []
    malformed = 0
    expected: Any = None
    observed: Any = None
    message = ""
    want = finding.cause.get("id") if isinstance(finding.cause, dict) else None
    cause: Cause | None = None
    others: list[tuple[int, Cause | None]] = []
    try:
        for i, step in enumerate(finding.steps):
            reference, state = stepper.reference, stepper.state
            if step.probe:
                result = stepper.probe(step.action, step.now_ms)
            else:
                result = stepper.step(step.action, step.now_ms, **step.cross_channel())
            fired += [(i, v) for v in result.violations]
            malformed += result.malformed and not step.probe
            match = None
            view = StepView(finding.kind, step.action, state if step.probe else reference, state,
                            result.expected, result.observed, probe=step.probe)
            rejudge = armed(view, stepper.probe_reducer(), step.now_ms, stepper.profile, step.cross_channel())
            for v in result.violations:
                if not _reproduces(finding, v):
                    continue
                if want is None:
                    match = v
                    break
                cs = violation_causes(view, v, rejudge)  # any of the step's causes it witnesses
                c = next((x for x in cs if x.id == want), None)
                if c is not None:
                    match, cause = v, c
                    break
                others.append((i, cs[0] if cs else None))
            if match is not None:
                hit, message = i, match.message
                expected = result.expected
                observed = result.observed if result.observed is not None else result.error
                if result.expected is not None and result.observed is not None:
                    diff = json_diff(result.expected, result.observed)
                break
            if result.observed is None and any(v.invariant in FAILURES for v in result.violations):
                break  # the target failed on this step: nothing further to run (an owed failure —
                # a consequence of an earlier cause — is not one: the stepper re-synced, as in the run)
    finally:
        stepper.session.close()  # a resync may have replaced the session the replay opened
    return ReplayResult(hit is not None, hit, fired, diff, malformed, expected, observed, message, cause,
                        others if hit is None else [])


def _reproduces(finding: Finding, v: Violation) -> bool:
    """`v` is the finding again: its invariant, and — unless the finding records a known issue
    (corpora/known/) — not classified `known` on this replay."""
    return v.invariant == finding.invariant and (finding.severity == "known" or v.severity != "known")
