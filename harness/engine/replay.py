"""Replay a finding exactly: same profile, initial state, actions and clock values.

The trace goes through the same `Stepper` the fuzz engine uses, so the same checks judge it. A
finding *reproduces* when its invariant fires again at some step of the trace — for a finding
that is not itself `known`, as a failing violation: a `known` firing (a listed upstream issue the
reference shows too, a difference the target's baseline accepts) does not reproduce it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.corpus.baseline import Baseline
from harness.corpus.cause import root_cause
from harness.corpus.finding import Finding
from harness.diff import json_diff
from harness.invariants.base import Violation
from harness.reference import Model, Profile
from harness.targets.base import Target

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
    before: tuple[Any, Any] | None = None  # (reference, target) states before the hit step

    def summary(self, finding: Finding) -> str:
        if self.reproduced:
            return f"reproduced: {finding.invariant} fires at step {self.step}"
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
    cause: Any = None,
) -> ReplayResult:
    """Replay under the finding's profile (or `profile`, the `--profile` override), with the
    model's payload checks on (and the spec's `schema`, when given) and the target's
    `baseline` applied, as in the run. `cause`: only a firing with this root cause (the
    signature the run gives it, `harness.corpus.cause.root_cause`) reproduces the finding."""
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
    )
    fired: list[tuple[int, Violation]] = []
    hit: int | None = None
    diff: list[str] = []
    malformed = 0
    expected: Any = None
    observed: Any = None
    message = ""
    before: tuple[Any, Any] | None = None
    try:
        for i, step in enumerate(finding.steps):
            states_before = (stepper.reference, stepper.state)
            if step.probe:
                result = stepper.probe(step.action, step.now_ms)
            else:
                result = stepper.step(step.action, step.now_ms)
            fired += [(i, v) for v in result.violations]
            malformed += result.malformed and not step.probe
            match = next(
                (
                    v for v in result.violations
                    if _reproduces(finding, v) and (
                        cause is None or root_cause(
                            v.invariant, finding.kind, step.action, result.expected, result.observed,
                            before=states_before, message=v.message,
                        ) == cause
                    )
                ),
                None,
            )
            if match is not None:
                hit, message, before = i, match.message, states_before
                expected = result.expected
                observed = result.observed if result.observed is not None else result.error
                if result.expected is not None and result.observed is not None:
                    diff = json_diff(result.expected, result.observed)
                break
            if result.observed is None:  # the target failed on this step: nothing further to run
                break
    finally:
        session.close()
    return ReplayResult(hit is not None, hit, fired, diff, malformed, expected, observed, message, before)


def _reproduces(finding: Finding, v: Violation) -> bool:
    """`v` is the finding again: its invariant, and — unless the finding records a known issue
    (corpora/known/) — not classified `known` on this replay."""
    return v.invariant == finding.invariant and (finding.severity == "known" or v.severity != "known")
