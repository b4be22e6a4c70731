"""Differential stepping: one action through the reference model and a target, then the checks.

The same `Stepper` serves the fuzz machines and `replay`, so a replayed finding is judged by
exactly the rules that found it.

Per step:
1. the reference model reduces the action. If it reports the payload malformed (schema-invalid:
   the spec leaves reducer behaviour unspecified) the step is a *probe*: the target gets it
   statelessly, must answer without crashing or hanging, and neither state moves;
2. otherwise the target's session steps it; an error, crash or hang is a finding;
3. the invariant registry checks the step, comparing with the model's result when the target is
   not the model itself (divergence), and — every `probe_every` steps — runs the probe checks
   that call the target's reducer again (purity, determinism, clock confinement, …).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.causes import at_path, message_shape
from harness.corpus.baseline import Baseline
from harness.diff import diff_paths
from harness.invariants._json import json_equal
from harness.invariants.base import Step, Violation
from harness.invariants.registry import ProbeSkipped, check_step
from harness.reference import MalformedAction, Model, Profile
from harness.spec import interop
from harness.targets.base import Target, TargetCrashed, TargetError, TargetSession, TargetTimeout
from harness.targets.jsonio import Written

from .accepted import accepted_divergence, follows_from_accepted, judge
from .probes import ProbeRations
from .retired import Retired

State = dict[str, Any]
#: `known` invariants that state a step is a no-op where the upstream reducers change the state
#: (REDUCERS.md §11): a target that keeps the state follows the documented reading.
NO_OP_READINGS: tuple[str, ...] = ("INV-015.strict",)

#: Pseudo-invariants for target failures (they are not in the spec catalogue).
TARGET_CRASH = "TARGET-CRASH"
TARGET_TIMEOUT = "TARGET-TIMEOUT"
TARGET_ERROR = "TARGET-ERROR"


def target_failure(e: TargetError, *, malformed: bool) -> Violation | None:
    """The finding a target error amounts to (None: an acceptable rejection of malformed input)."""
    if isinstance(e, TargetTimeout):
        return Violation(TARGET_TIMEOUT, "violation", f"target hung: {e}")
    if isinstance(e, TargetCrashed):
        return Violation(TARGET_CRASH, "violation", f"target crashed: {e}")
    if malformed:
        return None  # rejecting a schema-invalid payload is allowed
    return Violation(
        TARGET_ERROR,
        "violation",
        f"target raised on a step the reference model applies (INV-004/INV-006 totality): {e}",
    )


#: The cause of a target that refuses an integral float for a number (harness/spec/interop.py).
REFUSES_INTEGRAL_FLOAT = ("refuses-integral-float",)
#: The cause of a target that accepts an integral float and does not apply it as it applies the
#: integer (a typed decoder that reads `80.0` as an unknown action and ignores it).
IGNORES_INTEGRAL_FLOAT = ("ignores-integral-float",)


def ignores_integral_float(action: Any) -> Violation:
    where = ", ".join(interop.render_path(p) for p in interop.integral_floats(action)[:3])
    return Violation(
        "INV-D01",
        "divergence",
        f"target accepts an integral float for a number ({where}) and does not apply it as it "
        f"applies the same action with integers: JSON's `1.0` is the number 1 (RFC 8259 §6; JSON "
        f"Schema counts it an integer), so both are the same valid step",
        cause=IGNORES_INTEGRAL_FLOAT,
    )


#: The causes of what a target's bytes say (issue 32, "look at the bytes").
INT_AS_FLOAT = ("int-as-float",)
NON_FINITE = ("non-i-json-number",)
DUPLICATE_KEY = ("duplicate-json-key",)


def bytes_violations(expected: Any, observed: Any, before: Any, written: Written) -> list[Violation]:
    """What the target's reply to this step wrote (`written`, kept by its JSON reader) that is not
    how the model writes it: numbers (`number_violations`), and a name written twice in one
    object — not I-JSON, and a reader may take either value. A duplicate key is reported on
    the step whose reply wrote it; its cause, reported once, covers every later reply."""
    out = number_violations(expected, observed, before) if written.numbers else []
    if written.duplicate_keys:
        names = ", ".join(f'"{k}"' for k in written.duplicate_keys[:3])
        out.append(Violation("INV-D01", "divergence",
                             f"the target writes a name twice in one object ({names}): not I-JSON (RFC 7493 "
                             f"§2.3), and readers disagree on which value counts", cause=DUPLICATE_KEY))
    return out


def number_violations(expected: Any, observed: Any, before: Any) -> list[Violation]:
    """What the target wrote of numbers on this step, where the model has integers: an integer
    written as a float (`3` → `3.0`: equal by value, but not what the model wrote, and a typed
    reader of an integer field may refuse it), or a number JSON has not (`NaN`, `Infinity`).
    Only where it is new on this step (the state before did not hold it already)."""
    out = []
    floats = [p for p in interop.integral_floats(observed)
              if type(at_path(expected, p)) is int and not isinstance(at_path(before, p), float)]
    if floats:
        where = ", ".join(interop.render_path(p) for p in floats[:3])
        out.append(Violation("INV-D01", "divergence",
                             f"the target writes integers as floats ({where}): the model has integers there, "
                             f"and `3.0` is not how an integer is written", cause=INT_AS_FLOAT))
    odd = [p for p in interop.non_finite(observed) if not isinstance(at_path(before, p), float)]
    if odd:
        where = ", ".join(interop.render_path(p) for p in odd[:3])
        out.append(Violation("INV-D01", "divergence",
                             f"the target writes a number JSON has not ({where}: NaN or Infinity; RFC 8259 §6)",
                             cause=NON_FINITE))
    return out


def refuses_integral_float(e: TargetError, action: Any) -> Violation:
    where = ", ".join(interop.render_path(p) for p in interop.integral_floats(action)[:3])
    return Violation(
        TARGET_ERROR,
        "warning",
        f"target refuses an integral float for a number ({where}): JSON's `1.0` is the number 1 "
        f"(RFC 8259 §6; JSON Schema counts it an integer), and the same action with integers is a "
        f"valid step: {e}",
        cause=REFUSES_INTEGRAL_FLOAT,
    )


@dataclass
class StepResult:
    violations: list[Violation]
    malformed: bool  # the action was schema-invalid: a probe step, no state change
    expected: State | None  # reference model's state after the step
    observed: State | None  # target's state after the step (None after a target failure)
    error: str | None = None


@dataclass
class Stepper:
    kind: str
    state: State  # the target's current state
    model: Model
    session: TargetSession
    target: Target
    #: True when the target is the in-process reference model itself (no divergence check).
    target_is_model: bool = False
    probe_every: int = 1
    #: Accepted differences of this target (docs/baselines.md): normalisations applied to the
    #: target's state before the checks, and violations reported as `known`.
    baseline: Baseline | None = None
    #: Run-wide probe rations (engine/probes.py): with them, each probe check runs on the next
    #: step it applies to once per `probe_every` steps of the run, instead of every probe on
    #: every `probe_every`-th step of this sequence.
    rations: ProbeRations | None = None
    #: The run's retired value classes (engine/retired.py): the probe checks do not call the
    #: target with one, and a probe call that hangs retires its own class.
    retired: Retired | None = None
    #: The spec folder's action schema when this lane's model has none (a lane of another
    #: version than the folder's): the model's payload rules do not check value types, so a
    #: foreign action the folder's schema rejects (`id: [..]`) is malformed for a probe too.
    folder_schema: Callable[[Any], str | None] | None = None
    steps_taken: int = 0
    reference: State = field(init=False)

    def __post_init__(self) -> None:
        self.reference = self.state

    @property
    def profile(self) -> Profile:
        return self.model.profile

    def probe_reducer(self) -> Callable[[str, State, State, int], State]:
        """The reducer the probe checks call (the target's, normalised by the baseline)."""
        return self._probe_reducer()

    def _probe_reducer(self) -> Callable[[str, State, State, int], State]:
        if self.target_is_model:
            return self.model.reduce
        reduce = self._baselined_reduce if self.baseline is not None else self.target.reduce
        if self.retired is None:
            return reduce
        retired = self.retired

        def guarded(kind: str, state: State, action: State, now_ms: int) -> State:
            if retired(kind, action):
                raise ProbeSkipped(kind)
            try:
                return reduce(kind, state, action, now_ms)
            except TargetTimeout:
                retired.retire(kind, action)
                raise

        return guarded

    def _baselined_reduce(self, kind: str, state: State, action: State, now_ms: int) -> State:
        """The target's reducer for a probe, its answer normalised by the baseline against the
        model's answer to the same call (so an accepted quirk does not trip the probes)."""
        observed = self.target.reduce(kind, state, action, now_ms)
        try:
            expected = self.model.reduce(kind, state, action, now_ms)
        except MalformedAction:
            return observed
        return self._normalised(expected, observed, state)

    def _normalised(self, expected: State, observed: State, before: State) -> State:
        """The target's answer with the baseline's accepted differences removed, against the
        model's answer — and, inside a top-level subtree where the target's answer still differs
        from the model's (an ignored action keeps a draft the model replaces or clears), against
        the state the target was given: the accepted quirk in the kept subtree (an encoder
        dropping empty lists) is still the accepted quirk, not a new difference for the probes to
        trip on. That second pass is kept only where it adds no difference from the model."""
        assert self.baseline is not None
        out = self.baseline.normalise(expected, observed, before)
        if not (isinstance(out, dict) and isinstance(expected, dict) and isinstance(before, dict)):
            return out
        patched: dict[str, Any] = {}
        for k, v in out.items():
            if k not in before or json_equal(v, before[k]) or (k in expected and json_equal(v, expected[k])):
                continue
            cand = self.baseline.normalise({k: before[k]}, {k: v})[k]
            if k in expected:
                cand = self.baseline.normalise({k: expected[k]}, {k: cand})[k]
                if not _paths(expected[k], cand) <= _paths(expected[k], v):
                    continue  # it would make a difference from the model the target did not make
            patched[k] = cand
        return {**out, **patched} if patched else out
        kept = [k for k in out if k not in expected and k in before and out[k] != before[k]]
        if not kept:
            return out
        out = dict(out)
        for k in kept:
            out[k] = self.baseline.normalise({k: before[k]}, {k: out[k]}, {k: before[k]})[k]
        return out

    def step(
        self,
        action: Any,
        now_ms: int,
        *,
        session: State | None = None,
        chats: tuple[State, ...] = (),
    ) -> StepResult:
        """One valid-lane step. `session` / `chats`: the other channels of a multi-channel run
        at this point (for a chat step, its session; for a session step, its chats), so the
        cross-channel checks (INV-031) see them."""
        self.steps_taken += 1
        if getattr(self.session, "stale", False):
            # the target restarted after an earlier failure (a hang or crash another call met,
            # already reported): a new session on the state it had, not a crash of this step
            self._resync(self.state)
        before = self.state
        if self.model.handler(self.kind, action) is not None:
            off_lane = self.model.value_problem(action)
            if off_lane is not None:
                return self._probe_malformed(before, action, now_ms, floats=True)
        try:
            expected: State | None = self.model.reduce(self.kind, self.reference, action, now_ms)
            malformed = False
        except MalformedAction:
            expected, malformed = None, True
        if malformed:
            return self._probe_malformed(before, action, now_ms)
        take_written = getattr(self.target, "take_written", None)
        if take_written is not None:
            take_written()  # what earlier requests wrote (a session's read) is not this step's
        try:
            observed = self.session.step(action, now_ms)
        except TargetError as e:
            v = target_failure(e, malformed=False)
            if v is not None and self._owed(e, action, now_ms):
                v = None  # on the model's state the target passes: a consequence of an earlier cause
            # neither state moves (the model's `reference` stays too): the next step starts where both stood
            return StepResult(self._accepted(action, [v] if v else []), False, expected, None, str(e))
        assert expected is not None
        raw = observed
        written = bytes_violations(expected, raw, before, take_written()) if take_written is not None else []
        if self.baseline is not None and not self.target_is_model:
            observed = self._normalised(expected, observed, before)
        probes = self.probe_every > 0 and self.steps_taken % self.probe_every == 0
        step = Step(
            kind=self.kind,
            before=before,
            action=action,
            after=observed,
            now_ms=now_ms,
            profile=self.profile,
            reference_after=None if self.target_is_model else expected,
            session=session,
            chats=chats,
        )
        if self.rations is not None and not self.target_is_model:
            violations = check_step(step, probes=False)
            due = self.rations.due(self.kind, step.type)
            if due:
                violations += check_step(step, reducer=self._probe_reducer(), probes=True, only=due)
        else:
            violations = check_step(step, reducer=self._probe_reducer() if probes else None, probes=probes)
        if not self.target_is_model and any(v.severity == "known" for v in violations):
            violations = self._known_only_if_the_model_agrees(
                violations, action, expected, now_ms, session, chats
            )
        if not self.target_is_model and any(v.invariant == "INV-D01" for v in violations):
            violations = self._documented_no_op(violations, action, expected, observed, before, now_ms,
                                                session, chats)
        violations += written
        judged = self._accepted(action, violations, expected, observed)
        tag = accepted_divergence(violations, judged, self.baseline)
        if tag is not None:
            # The baseline accepts this step's difference from the reference: what else fires
            # only because of it is accepted with it, and the reference goes on from the
            # target's state, so the accepted difference is not reported again on every later
            # step (only what later steps do differently is).
            judged = follows_from_accepted(judged, tag, self._model_step(action, expected, now_ms, session, chats))
        self.state, self.reference = observed, expected
        if not self.target_is_model and not json_equal(raw, expected):
            self._resync(expected)
        return StepResult(judged, False, expected, observed)

    def _resync(self, state: State) -> None:
        """Give the target the model's state after a step where they parted (a divergence, an
        accepted one, or a failure): the next step starts where the model is, so a divergence
        owns its consequences — a later step cannot fail or differ *because* of it and be taken
        for a cause of its own (docs/corpus.md, "Root causes"). What the target reads back is
        its state from then on: a difference its representation cannot avoid (an encoder that
        drops empty lists) stays, and the cause classifier counts it as inherited. Replay and
        the shrinker step through here too, so a finding replays as it was found."""
        with contextlib.suppress(TargetError):
            self.session.close()
        try:
            self.session = self.target.session(self.kind, state)
            read = self.session.read()
        except TargetError:
            self.state = state  # the next step meets the target's failure again
            return
        # as the baseline reads the target (an accepted encoder loss is no difference), like
        # every state a step observes
        self.state = self._normalised(state, read, state) if self.baseline is not None else read

    def _accepted(
        self, action: Any, violations: list[Violation], expected: Any = None, observed: Any = None
    ) -> list[Violation]:
        """The baseline applied to a step's or a probe's violations (`harness.engine.accepted`):
        every path of `step` and `probe` returns through here, so no accepted difference fails
        a run, a replay or a shrink candidate."""
        if self.baseline is None or not violations:
            return violations
        return judge(self.baseline, self.kind, action, violations, expected, observed)

    def _known_only_if_the_model_agrees(
        self,
        violations: list[Violation],
        action: Any,
        expected: State,
        now_ms: int,
        session: State | None = None,
        chats: tuple[State, ...] = (),
    ) -> list[Violation]:
        """A `known` violation on a target stays known only when the reference model, which
        reproduces the upstream reducers, shows the same violation on the same step: the same
        invariant with the same message — or, when the two states already differed before
        the step, a message of the same shape (`message_shape`: the values may differ then).
        A target that breaks a known invariant its own way is a new finding (`violation`)."""
        ids = {v.invariant for v in violations if v.severity == "known"}
        same: Callable[[str], str] = (
            _verbatim if json_equal(self.state, self.reference) else message_shape
        )
        ref_step = self._model_step(action, expected, now_ms, session, chats)
        on_model = {
            (v.invariant, same(v.message))
            for v in check_step(ref_step, reducer=self.model.reduce, probes=True, only=ids)
        }
        return [
            v
            if v.severity != "known" or (v.invariant, same(v.message)) in on_model
            else Violation(
                v.invariant,
                "violation",
                f"{v.message} (the reference model, which reproduces the known upstream issue, "
                "does not show this on the same step: the target breaks it its own way)",
            )
            for v in violations
        ]

    def _model_step(self, action: Any, expected: State, now_ms: int, session: State | None,
                    chats: tuple[State, ...]) -> Step:
        """The step as the model took it, with the same cross-channel context (INV-031)."""
        return Step(self.kind, self.reference, action, expected, now_ms, self.profile,
                    session=session, chats=chats)

    def _documented_no_op(
        self, violations: list[Violation], action: Any, expected: State, observed: State, before: State,
        now_ms: int, session: State | None, chats: tuple[State, ...],
    ) -> list[Violation]:
        """A target that leaves the state as it was where upstream contradicts itself — the
        fixtures call the step a no-op, the reducers change it (a `known` invariant of
        `NO_OP_READINGS` fires on the model's step) — follows the documented reading: its
        difference from the model is that known issue, not a divergence (REDUCERS.md §11 item
        18: a stale tool-call action after `chat/error` resets Error to Idle in the reducers)."""
        if not json_equal(observed, before) or not json_equal(self.state, self.reference):
            return violations
        model_step = self._model_step(action, expected, now_ms, session, chats)
        fired = [v for v in check_step(model_step, only=set(NO_OP_READINGS)) if v.severity == "known"]
        if not fired:
            return violations
        reading = fired[0]
        return [
            Violation(reading.invariant, "known",
                      f"{reading.message}; the target leaves the state as it was, as the fixtures describe")
            if v.invariant == "INV-D01" else v
            for v in violations
        ]

    def probe(self, action: Any, now_ms: int, *, judged: bool = True) -> StepResult:
        """An adversarial action, sent statelessly: neither the model's nor the target's state moves.

        The target must answer without crashing or hanging. When the model does not know the
        action type at all (unknown, foreign family, newer than the profile: INV-004/INV-005),
        the target's answer is checked like a step — it must leave the state unchanged. For a
        known type with a malformed or unexpected payload the spec says nothing more.
        `judged=False`: whether the payload is valid cannot be told here (a mutated field, and no
        schema for this lane's version to check its type: `"value": "o1"` in a boolean answer
        passes the model's payload rules), so an error reply is acceptable, as for a malformed one.
        """
        self.steps_taken += 1
        before = self.state
        if (not judged or self.model.handler(self.kind, action) is not None or not _typed(action)
                or self._foreign_invalid(action)):
            # a known type with a payload of any shape, or no string `type` at all (`{"type":
            # 42}`), or another family's action whose payload its own schema rejects (`{"type":
            # "terminal/claimed"}` to a session): a schema-invalid payload, for which an error
            # reply is an acceptable answer (but for refusing an integral float: `_only_floats`)
            return self._probe_malformed(before, action, now_ms, floats=True)
        if self.target_is_model:
            observed = self.model.reduce(self.kind, before, action, now_ms)
        else:
            try:
                observed = self.target.reduce(self.kind, before, action, now_ms)
            except TargetError as e:
                v = target_failure(e, malformed=False)
                if v is not None and self._owed(e, action, now_ms):
                    v = None
                return StepResult(self._accepted(action, [v] if v else []), True, None, None, str(e))
            if self.baseline is not None:
                observed = self.baseline.normalise(before, observed, before)  # the model's answer: a no-op
        step = Step(self.kind, before, action, observed, now_ms, self.profile, reference_after=None if self.target_is_model else before)
        violations = check_step(step)
        if not self.target_is_model and any(v.severity == "known" for v in violations):
            # the model's answer to a type it does not know is its state, unchanged
            violations = self._known_only_if_the_model_agrees(violations, action, self.reference, now_ms)
        return StepResult(self._accepted(action, violations, before, observed), True, before, observed)

    def _probe_malformed(self, before: State, action: Any, now_ms: int, *, floats: bool = False) -> StepResult:
        """A schema-invalid or off-lane payload, sent statelessly: any answer but a crash or a
        hang is acceptable — except, with `floats`, an error on a payload whose only fault is an
        integral float (`1.0`) where the integer alone is a valid step: JSON's `1.0` is the
        number 1, and refusing it is a (low-severity) finding of its own cause."""
        if self.target_is_model:
            # The model answers like any target: a refusal (`MalformedAction`) or a state, never
            # another exception — which would be a crash of the reference model, told as ours.
            with contextlib.suppress(MalformedAction):
                self.model.reduce(self.kind, before, action, now_ms)
            return StepResult([], True, None, before)
        try:
            answer = self.target.reduce(self.kind, before, action, now_ms)
        except TargetError as e:
            v = target_failure(e, malformed=True)
            if v is None and floats and self._only_floats(before, action, now_ms):
                v = refuses_integral_float(e, action)
            return StepResult(self._accepted(action, [v] if v else []), True, None, before, str(e))
        if floats and self._ignores_floats(before, action, answer, now_ms):
            # accepted means applied: the same step with integers changes what this did not
            return StepResult(self._accepted(action, [ignores_integral_float(action)]), True, None, before)
        return StepResult([], True, None, before)

    def _ignores_floats(self, before: State, action: Any, answer: State, now_ms: int) -> bool:
        """`action`'s only fault is its integral floats, and the target, which accepted it,
        answers the integer form on the same state otherwise: it read the floats as something
        else (an unknown action, a dropped field) instead of the numbers they are. The target is
        compared with itself, so no other cause of it shows here."""
        whole = self._integer_form(action, now_ms)
        if whole is None:
            return False
        try:
            integers = self.target.reduce(self.kind, before, whole, now_ms)
        except TargetError:
            return False  # it refuses the integers too: another cause, told on a valid step
        return not json_equal(answer, integers)

    def _integer_form(self, action: Any, now_ms: int) -> Any:
        """`action` with its integral floats as integers when that is a valid step on the
        model's state, else None."""
        if not interop.integral_floats(action):
            return None
        whole = interop.as_integers(action)
        if self.model.value_problem(whole) is not None:
            return None
        try:
            self.model.reduce(self.kind, self.reference, whole, now_ms)
        except MalformedAction:
            return None
        return whole

    def _owed(self, e: TargetError, action: Any, now_ms: int) -> bool:
        """The target answered `action` on its own state with an error, where that state differs
        from the model's (what its representation lost: an encoder that drops empty lists), and
        on the model's state it does not fail: the failure belongs to the cause of that
        difference, not to a cause of its own. A crash or a hang is never owed."""
        if self.target_is_model or isinstance(e, TargetCrashed | TargetTimeout) or json_equal(self.state, self.reference):
            return False
        try:
            self.target.reduce(self.kind, self.reference, action, now_ms)
        except TargetError:
            return False
        return True

    def _foreign_invalid(self, action: Any) -> bool:
        """`action` is a type of another state kind, and not a valid payload of that type."""
        owner = self.model.owner(action)
        if owner is None or owner == self.kind:
            return False
        if self.model.wire_problem(owner, action) is not None:
            return True
        return self.model.schema is None and self.folder_schema is not None and self.folder_schema(action) is not None

    def _only_floats(self, before: State, action: Any, now_ms: int) -> bool:
        """`action` is a valid step once its integral floats are integers, and the target, which
        refused it, accepts that integer form on the same state: the floats are what it refused."""
        whole = self._integer_form(action, now_ms)
        if whole is None:
            return False
        try:
            self.target.reduce(self.kind, before, whole, now_ms)
        except TargetError:
            return False
        return True


def _verbatim(message: str) -> str:
    return message


def _typed(action: Any) -> bool:
    """An object with a string `type` (only such an action can be an unknown-type no-op)."""
    return isinstance(action, dict) and isinstance(action.get("type"), str)


def _paths(a: Any, b: Any) -> set[tuple[Any, ...]]:
    """The paths where `a` and `b` differ."""
    return {p for p, _, _ in diff_paths(a, b)}
