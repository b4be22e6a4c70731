"""Which root cause a violation witnesses (transformation.py, beside it, holds the classification).

Signing knows what the classification alone cannot: which invariants are probe checks (they
call the target's reducer again, so the step's state difference is not what they saw) and
which pseudo-invariants are target failures. The fuzz machine, the campaign and replay all sign a
violation here, so a finding replays under the very identity it was reported with.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, Final

from harness.invariants._json import fresh, json_equal
from harness.invariants.base import Step, Violation
from harness.invariants.registry import REGISTRY, check_step
from harness.spec.modelled import state_schema
from harness.spec.specdir import ENV_VAR
from harness.targets.base import TargetError

from .transformation import (
    UNMODELLED,
    Cause,
    StepView,
    check_cause,
    failure_cause,
    message_shape,
)

#: Re-judge a probe invariant with the target's reducer on the *model's* state before the step:
#: (invariant, message) -> does it still fire, the same way (a message of the same shape)?
Rejudge = Callable[[str, str], bool]

#: Pseudo-invariants for a target that failed (harness/engine/stepper.py).
FAILURES: Final = frozenset({"TARGET-CRASH", "TARGET-TIMEOUT", "TARGET-ERROR"})
#: An action type no version defines (a no-op on every conforming reducer, INV-004): the echo.
ECHO_TYPE: Final = "ahp-fuzz/echo"
#: Severity order when one step shows one cause through several invariants: the finding is
#: told by the strongest (a MUST before a SHOULD before a divergence).
SEVERITY_RANK: Final = {"violation": 0, "warning": 1, "divergence": 2, "known": 3}


def violation_cause(view: StepView, v: Violation, rejudge: Rejudge | None = None) -> Cause | None:
    """The cause `v` witnesses on the step `view`; None when the step made no difference of its
    own and the states already differed (an earlier step's cause, inherited). `rejudge` (see
    `rejudger`) tells a probe check that saw a difference inherited from an earlier step."""
    if v.cause is not None:
        return Cause(v.cause, _EXPLICIT.get(v.cause, v.message[:160]))
    if v.invariant in FAILURES:
        return failure_cause(v.invariant, v.message)
    inv = REGISTRY.get(v.invariant)
    if inv is not None and inv.probe:
        failed = _PROBE_FAILURE.match(v.message)
        if failed is not None:  # the target hung or crashed when a probe called it: that failure
            return failure_cause(_FAILURE_OF[failed.group(1)], _THEIR_OWN_WAY.sub("", failed.group(2)))
        if not view.probe and view.causes:
            # the step itself differs from the model: a probe that re-runs the target's reducer on
            # it meets that difference again (an action the target does not append twice because
            # it does not apply it once) — the step's own causes, not one of the probe's
            return view.causes[0]
        cause = check_cause(v.invariant, v.message)
        if cause.transformation == "check":
            cause = view.missing_key_cause(v.message, _LazyAnswer(rejudge)) or cause
        if (cause.transformation == "check" and rejudge is not None and not view.probe
                and not json_equal(view.before, view.target_before) and not rejudge(v.invariant, v.message)):
            return None  # on the model's state the target's reducer passes: an earlier cause
        represented = getattr(rejudge, "represented", None)
        if not view.probe and represented is not None and represented(v.invariant, v.message) is False:
            return None  # only what the target's representation cannot hold (a dropped key): its cause
        return cause
    causes = view.causes
    if causes:
        return causes[0]
    if view.inherited_only:
        return None
    return check_cause(v.invariant, v.message)


def violation_causes(view: StepView, v: Violation, rejudge: Rejudge | None = None) -> list[Cause]:
    """Every cause `v` may witness: for a check that compares the states after the step, each
    cause the step's own differences show (first by `PRIORITY`) — a louder cause does not hide
    a quieter one on the same step —, else the one `violation_cause` gives."""
    first = violation_cause(view, v, rejudge)
    if first is None:
        return []
    causes = view.causes
    return list(causes) if causes and first.id == causes[0].id else [first]


#: Causes that are a note of the run, never a finding: cause id -> the pseudo-invariant the
#: note is counted under (a `known` item: reported, not failing).
NOTES: Final = {UNMODELLED.id: "FIDELITY-B"}
#: What each note says in the report (engine/run.py's known items).
NOTE_ISSUES: Final = {
    "FIDELITY-B": "round-trip group B (types/test-cases/round-trips/KNOWN-FIDELITY-GAPS.md): a client with "
                  "a runtime decoder drops the keys its types do not model",
}


def schema_modelled() -> Callable[[str, Any, tuple[Any, ...]], bool | None] | None:
    """`StepView.modelled` from the spec folder the run's schema checks read ($AHP_SPEC_DIR, as
    INV-007 does), or None without one."""
    path = os.environ.get(ENV_VAR)
    schema = state_schema(path) if path else None
    return schema.modelled if schema is not None else None


#: A probe check whose call of the target's reducer hung or crashed (harness/invariants/registry.py
#: words it so): the same failure as on a step, one cause.
_PROBE_FAILURE: Final = re.compile(r"^the reducer raised during the probe: (TargetTimeout|TargetCrashed): (.*)$", re.S)
_FAILURE_OF: Final = {"TargetTimeout": "TARGET-TIMEOUT", "TargetCrashed": "TARGET-CRASH"}
#: What the stepper adds to a `known` check that fired on the target alone (engine/stepper.py).
_THEIR_OWN_WAY: Final = re.compile(r" \(the reference model, which reproduces the known upstream issue, does not "
                                   r"show this on the same step: the target breaks it its own way\)$")
#: The summaries of the causes a producer names itself (`Violation.cause`).
_EXPLICIT: Final = {
    ("refuses-integral-float",): "the target refuses an integral float (`1.0`) for a number",
    ("ignores-integral-float",): "the target accepts an integral float (`80.0`) for a number but does "
                                 "not apply it as it applies the integer",
    ("int-as-float",): "the target writes integers as floats (`3` → `3.0`)",
    ("non-i-json-number",): "the target writes numbers JSON has not (`NaN`, `Infinity`)",
    ("duplicate-json-key",): "the target writes a name twice in one object (not I-JSON)",
}


class _LazyAnswer:
    """The target's own answer to the step (asked only when iterated)."""

    def __init__(self, rejudge: Rejudge | None) -> None:
        self._rejudge = rejudge

    def __iter__(self) -> Any:
        answer = getattr(self._rejudge, "answer", None)
        if answer is not None:
            yield answer()


def rejudger(
    reduce: Callable[[str, Any, Any, int], Any], view: StepView, now_ms: int, profile: Any,
    context: dict[str, Any] | None = None,
) -> Rejudge:
    """A `Rejudge` for one step: the probe re-run with the target's reducer (`reduce`) on the
    model's states before and after the step, as if the target had not diverged earlier."""

    def fires_on(before: Any, after: Any, invariant: str, message: str) -> bool:
        """The probe `invariant`, re-run with the target's reducer from `before` to `after`,
        fires the same way (a message of the same shape)."""
        step = Step(view.kind, before, view.action, after, now_ms, profile, **(context or {}))
        shape = message_shape(message)
        return any(v.invariant == invariant and message_shape(v.message) == shape
                   for v in check_step(step, reducer=reduce, probes=True, only={invariant}))

    def still_fires(invariant: str, message: str) -> bool:
        # the same way: a probe that raised on the target's own state and, on the model's, meets
        # only the target's known representation loss again did not see a cause of its own
        if not isinstance(view.expected, dict):
            return True
        return fires_on(view.before, view.expected, invariant, message)

    def reduced(state: Any, action: Any) -> Any:
        """The target's reducer on `state` (None: it failed)."""
        try:
            return reduce(view.kind, fresh(state), action, now_ms)
        except (TargetError, ValueError, KeyError, TypeError):
            return None

    def answer_on(state: Any) -> Any:
        """The target's reducer applying the step's action to `state` (None: it failed)."""
        return reduced(state, fresh(view.action))

    def answer() -> Any:
        """The target's reducer on its own state before the step (what a probe re-runs)."""
        return answer_on(view.target_before)

    def echo_on(state: Any) -> Any:
        """The target's answer to a no-op (an unknown action type) on `state`: what its
        representation keeps of it."""
        return reduced(state, {"type": ECHO_TYPE})

    def echo() -> Any:
        """`echo_on` the model's state after the step."""
        return echo_on(view.expected)

    def represented(invariant: str, message: str) -> bool | None:
        """Does the probe fire, the same way, on the states as the target's representation holds
        them (its echo of the model's states before and after the step)? None: the
        representation holds them whole, or cannot be asked — nothing to conclude."""
        if not isinstance(view.expected, dict) or not isinstance(view.before, dict):
            return None
        before, after = echo_on(view.before), echo_on(view.expected)
        if not isinstance(before, dict) or not isinstance(after, dict) or json_equal(before, view.before):
            return None
        return fires_on(before, after, invariant, message)

    still_fires.answer = answer  # type: ignore[attr-defined]
    still_fires.represented = represented  # type: ignore[attr-defined]
    still_fires.echo = echo  # type: ignore[attr-defined]
    still_fires.echo_on = echo_on  # type: ignore[attr-defined]
    still_fires.answer_on = answer_on  # type: ignore[attr-defined]
    return still_fires


def armed(
    view: StepView, reduce: Callable[[str, Any, Any, int], Any], now_ms: int, profile: Any,
    context: dict[str, Any] | None = None,
) -> Rejudge:
    """The step's `rejudger`, with `view` given what classifying it asks of the target and the
    spec folder (its echoes, the state schema): how the fuzz machine and replay both prepare a
    step for signing."""
    rejudge = rejudger(reduce, view, now_ms, profile, context)
    view.echo = None if view.probe else rejudge.echo  # type: ignore[attr-defined]
    view.echo_on = None if view.probe else rejudge.echo_on  # type: ignore[attr-defined]
    view.answer_on = None if view.probe else rejudge.answer_on  # type: ignore[attr-defined]
    view.modelled = schema_modelled()
    return rejudge
