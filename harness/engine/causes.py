"""Which root cause a violation witnesses (harness/corpus/cause.py holds the classification).

The engine knows what the corpus cannot: which invariants are probe checks (they call the
target's reducer again, so the step's state difference is not what they saw) and which
pseudo-invariants are target failures. The fuzz machine, the campaign and replay all sign a
violation here, so a finding replays under the very identity it was reported with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from harness.corpus.cause import Cause, StepView, check_cause, failure_cause
from harness.invariants._json import fresh, json_equal
from harness.invariants.base import Step, Violation
from harness.invariants.registry import REGISTRY, check_step
from harness.targets.base import TargetError

#: Re-judge a probe invariant with the target's reducer on the *model's* state before the step:
#: (invariant) -> does it still fire?
Rejudge = Callable[[str], bool]

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
    if v.invariant in FAILURES:
        return failure_cause(v.invariant, view.type, view.probe)
    inv = REGISTRY.get(v.invariant)
    if inv is not None and inv.probe:
        cause = check_cause(v.invariant, v.message)
        if cause.transformation == "check":
            cause = view.missing_key_cause(v.message, _LazyAnswer(rejudge)) or cause
        if (cause.transformation == "check" and rejudge is not None and not view.probe
                and not json_equal(view.before, view.target_before) and not rejudge(v.invariant)):
            return None  # on the model's state the target's reducer passes: an earlier cause
        return cause
    causes = view.causes
    if causes:
        return causes[0]
    if view.inherited_only:
        return None
    return check_cause(v.invariant, v.message)


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

    def still_fires(invariant: str) -> bool:
        if not isinstance(view.expected, dict):
            return True
        step = Step(view.kind, view.before, view.action, view.expected, now_ms, profile, **(context or {}))
        return any(v.invariant == invariant for v in check_step(step, reducer=reduce, probes=True, only={invariant}))

    def answer() -> Any:
        """The target's reducer on its own state before the step (what a probe re-runs)."""
        try:
            return reduce(view.kind, fresh(view.target_before), fresh(view.action), now_ms)
        except (TargetError, ValueError, KeyError, TypeError):
            return None

    def echo() -> Any:
        """The target's answer to a no-op (an unknown action type) on the model's state after
        the step: what its representation keeps of that state."""
        try:
            return reduce(view.kind, fresh(view.expected), {"type": ECHO_TYPE}, now_ms)
        except (TargetError, ValueError, KeyError, TypeError):
            return None

    still_fires.answer = answer  # type: ignore[attr-defined]
    still_fires.echo = echo  # type: ignore[attr-defined]
    return still_fires
