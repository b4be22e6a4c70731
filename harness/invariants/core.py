"""A. Reducer core (INVARIANTS.md INV-001…009): purity, determinism, the clock, unknown and foreign
actions, totality.

Most of these are probe checks: they call the target's reducer again on fresh deep copies of the
step's inputs, so a reducer that mutates its inputs cannot corrupt the step the other checks see.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from harness.reference.chat_status import end_time
from harness.reference.profile import iso_ms
from harness.spec.versions import ACTION_INTRODUCED_IN, KIND_PREFIX, is_known_to

from ._json import describe_diffs, fresh, same, same_except, short
from .base import ALL_KINDS, JSONDict, Reducer, Step, catalogue_entry, invariant

#: The eight chat actions that stamp `modifiedAt` with the clock on their non-no-op paths.
STAMPING: Final = frozenset(
    {
        "chat/turnStarted",
        "chat/turnComplete",
        "chat/turnCancelled",
        "chat/error",
        "chat/inputRequested",
        "chat/inputAnswerChanged",
        "chat/inputCompleted",
        "chat/truncated",
    }
)
_ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
#: How far the clock probe moves `now` (a different day, second and millisecond).
CLOCK_SHIFT_MS: Final = 86_400_000 + 61_001
#: A type no protocol version defines (INVARIANTS.md INV-004, fixtures 087–089).
FUTURE_TYPE: Final = "future/newAction"
#: One action type of each family, used when the step's own suffix does not exist there.
_REPRESENTATIVE: Final = {
    "root": "root/agentsChanged",
    "session": "session/titleChanged",
    "chat": "chat/delta",
    "terminal": "terminal/data",
    "changeset": "changeset/cleared",
    "annotations": "annotations/removed",
    "resourceWatch": "resourceWatch/changed",
    "automation": "automation/removed",
    "automationRun": "automationRun/sessionSet",
    "canvas": "canvas/stateChanged",
}


def _fresh(step: Step) -> tuple[JSONDict, JSONDict]:
    return fresh(step.before), fresh(step.action)


def _strict_diff(original: object, copy_after: object, what: str) -> str:
    text = describe_diffs(original, copy_after, left="before", right="after")
    return text or f"{what}: a key was added or removed with a null value"


@invariant(
    "INV-001",
    "Inputs are never mutated",
    severity="violation",
    source='guide/actions.md §Reducers ("pure"); guide/what-is-ahp.md; R§2.3 item 1',
    kinds=ALL_KINDS,
    probe=True,
)
def inputs_not_mutated(step: Step, reducer: Reducer) -> Iterator[str]:
    """Reducers are pure — no side effects: after computing R(k, s, a, now), `s` and `a` are
    deep-equal to copies taken before the call."""
    state, action = _fresh(step)
    reducer(step.kind, state, action, step.now_ms)
    if state != step.before:
        yield f"the reducer mutated its input state: {_strict_diff(step.before, state, 'state')}"
    if action != step.action:
        yield f"the reducer mutated its input action: {_strict_diff(step.action, action, 'action')}"


@invariant(
    "INV-002",
    "Determinism given an explicit clock",
    severity="violation",
    source='guide/actions.md ("no side effects, no I/O … same reducer code runs on both server '
    'and client"); R§2.3 item 2, R§11 item 1',
    kinds=ALL_KINDS,
    probe=True,
)
def deterministic(step: Step, reducer: Reducer) -> Iterator[str]:
    """R(k, s, a, now) is a function of its arguments: repeated calls give equal results; the
    only external input is `now`."""
    first = reducer(step.kind, *_fresh(step), step.now_ms)
    if not same(first, step.after):
        yield "re-running the step gave a different state: " + describe_diffs(
            step.after, first, left="step", right="rerun"
        )
        return
    second = reducer(step.kind, *_fresh(step), step.now_ms)
    if not same(first, second):
        yield "two re-runs of the step differ: " + describe_diffs(
            first, second, left="run1", right="run2"
        )


def _without_modified_at(state: Any) -> Any:
    """The state without `modifiedAt`: the differences a message names "outside modifiedAt"."""
    return {k: v for k, v in state.items() if k != "modifiedAt"} if isinstance(state, dict) else state


@invariant(
    "INV-003",
    "Clock confinement",
    severity="violation",
    source="R§2.3, R§5.1; fixtures (now = 9999 ⇒ 1970-01-01T00:00:09.999Z)",
    kinds=ALL_KINDS,
    probe=True,
)
def clock_confined(step: Step, reducer: Reducer) -> Iterator[str]:
    """Changing `now` changes only `ChatState.modifiedAt`, and only for chat/turnStarted,
    turnComplete, turnCancelled, error, inputRequested, inputAnswerChanged, inputCompleted and
    truncated on their non-no-op paths; when written it is the ISO-8601 UTC rendering of `now`."""
    later = step.now_ms + CLOCK_SHIFT_MS
    shifted = reducer(step.kind, *_fresh(step), later)
    if same(shifted, step.after):
        return
    if step.kind == "chat" and step.type in STAMPING:
        if not same_except(shifted, step.after, frozenset({"modifiedAt"})):
            yield f"with now={later} the step also differs outside modifiedAt: " + describe_diffs(
                _without_modified_at(step.after), _without_modified_at(shifted),
                left=f"now={step.now_ms}", right=f"now={later}",
            )
        elif shifted.get("modifiedAt") != iso_ms(later):
            yield (
                f"with now={later} modifiedAt is {short(shifted.get('modifiedAt'))}, "
                f"not {iso_ms(later)}"
            )
        return
    yield f"{step.type or '<no type>'} depends on the clock: " + describe_diffs(
        step.after, shifted, left=f"now={step.now_ms}", right=f"now={later}"
    )


@invariant(
    "INV-003.stamp",
    "modifiedAt is written only by the clock-reading actions, as ISO-8601 of now",
    severity="violation",
    source="R§2.3, R§5.1 (INVARIANTS.md INV-003, the part visible in one step)",
    kinds={"chat"},
)
def modified_at_stamp(step: Step) -> Iterator[str]:
    """When a chat reducer writes `modifiedAt` it is the ISO-8601 UTC rendering of `now` with
    exactly 3 fractional digits and a trailing `Z`, and only the eight clock-reading chat actions
    write it."""
    stamp = step.after.get("modifiedAt")
    if stamp == step.before.get("modifiedAt"):
        return
    if step.profile.clock_from_actions:
        yield from _derived_stamp(step, stamp)
        return
    if step.type not in STAMPING:
        yield (
            f"{step.type} changed modifiedAt from {short(step.before.get('modifiedAt'))} to "
            f"{short(stamp)}; only the clock-reading actions may write it"
        )
        return
    if not isinstance(stamp, str) or not _ISO_MS.match(stamp):
        yield f"modifiedAt {short(stamp)} is not ISO-8601 UTC with 3 fractional digits and Z"
    elif stamp != iso_ms(step.now_ms):
        yield f"modifiedAt is {stamp}, but now={step.now_ms} renders as {iso_ms(step.now_ms)}"


def _derived_stamp(step: Step, stamp: Any) -> Iterator[str]:
    """0.9.0 ("Chat reducers now derive `modifiedAt` from turn action data instead of local
    wall clocks"): `chat/turnStarted` writes its `startedAt`; a turn's end writes the turn's
    `startedAt + duration` (duration clamped to ≥ 0) in UTC; nothing else writes it."""
    action = step.action
    if step.type == "chat/turnStarted":
        want = action.get("startedAt")
    elif step.type in ("chat/turnComplete", "chat/turnCancelled", "chat/error"):
        turn = step.before.get("activeTurn")
        duration = action.get("duration")
        clamped = max(0, duration) if isinstance(duration, int | float) and not isinstance(duration, bool) else None
        want = end_time(turn.get("startedAt") if isinstance(turn, dict) else None, clamped)
    else:
        yield (
            f"{step.type} changed modifiedAt from {short(step.before.get('modifiedAt'))} to "
            f"{short(stamp)}; under {step.profile.label} only a turn's start and end write it, from their data"
        )
        return
    if stamp != want:
        yield f"{step.type} wrote modifiedAt {short(stamp)}, but its data gives {short(want)}"


def _family(action_type: str) -> str | None:
    """The state kind named by the type's prefix (`chat/delta` -> `chat`), or None."""
    family = action_type.partition("/")[0]
    return family if family in KIND_PREFIX else None


def _unknown_to(kind: str, action_type: str, step: Step) -> bool:
    """The type is of this kind's family but not known to the negotiated version, or of no family."""
    family = _family(action_type)
    if family is None:
        return True
    if family != kind:
        return False
    return not is_known_to(action_type, step.profile.version)


@invariant(
    "INV-004",
    "Unknown action type is a no-op",
    severity="warning",
    source='specification/versioning.md Forward Compatibility item 5 ("clients SHOULD silently '
    'ignore actions with unrecognized type values"); R§2.3 item 3; fixtures 087–089, 144, 201, 217',
    kinds=ALL_KINDS,
)
def unknown_is_noop(step: Step) -> Iterator[str]:
    """For an action whose `type` is not one of the kind's known types (including future types
    such as `future/newAction` and types newer than the negotiated version), the reducer returns
    a state equal to the input and does not raise."""
    if _unknown_to(step.kind, step.type, step) and not same(step.before, step.after):
        yield f"unknown type {step.type!r} changed the {step.kind} state: " + describe_diffs(
            step.before, step.after, left="before", right="after"
        )


def _near_misses(action_type: str) -> list[str]:
    out = [FUTURE_TYPE]
    if action_type:
        out += [action_type + "/", action_type.swapcase()]
    return [t for t in out if t not in ACTION_INTRODUCED_IN]


@invariant(
    "INV-004.probe",
    "Unknown action types are no-ops (probed with near-miss types)",
    severity="warning",
    source="specification/versioning.md Forward Compatibility item 5; R§2.3 item 3 (INVARIANTS.md INV-004)",
    kinds=ALL_KINDS,
    probe=True,
)
def unknown_probe(step: Step, reducer: Reducer) -> Iterator[str]:
    """Clients SHOULD silently ignore actions with unrecognized `type` values: the step's action
    with its type replaced by `future/newAction`, a trailing slash or swapped case leaves the
    state unchanged and does not raise."""
    for t in _near_misses(step.type):
        state, action = _fresh(step)
        result = reducer(step.kind, state, {**action, "type": t}, step.now_ms)
        if not same(result, step.before):
            yield f"unknown type {t!r} changed the {step.kind} state: " + describe_diffs(
                step.before, result, left="before", right="after"
            )


@invariant(
    "INV-005",
    "Foreign-family actions are no-ops",
    severity="warning",
    source="R§2.2 (routing by channel kind), R§2.3 item 3; TS reducers' default branch",
    kinds=ALL_KINDS,
)
def foreign_is_noop(step: Step) -> Iterator[str]:
    """A known action of family F applied to the reducer of a different kind is a no-op (e.g.
    `session/titleChanged` on a chat state)."""
    family = _family(step.type)
    if family is not None and family != step.kind and not same(step.before, step.after):
        yield f"foreign {step.type} changed the {step.kind} state: " + describe_diffs(
            step.before, step.after, left="before", right="after"
        )


def _foreign_types(kind: str, action_type: str) -> list[str]:
    suffix = action_type.split("/", 1)[1] if "/" in action_type else ""
    out = []
    for family, prefix in KIND_PREFIX.items():
        if family == kind:
            continue
        twin = prefix + suffix
        out.append(twin if twin in ACTION_INTRODUCED_IN else _REPRESENTATIVE[family])
    return out


@invariant(
    "INV-005.probe",
    "Foreign-family actions are no-ops (probed with every other family)",
    severity="warning",
    source="R§2.2, R§2.3 item 3 (INVARIANTS.md INV-005)",
    kinds=ALL_KINDS,
    probe=True,
)
def foreign_probe(step: Step, reducer: Reducer) -> Iterator[str]:
    """A known action of another family is a no-op: the step's payload sent with the same-named
    type of every other family (or a representative type of it) leaves the state unchanged."""
    for t in _foreign_types(step.kind, step.type):
        state, action = _fresh(step)
        result = reducer(step.kind, state, {**action, "type": t}, step.now_ms)
        if not same(result, step.before):
            yield f"foreign type {t!r} changed the {step.kind} state: " + describe_diffs(
                step.before, result, left="before", right="after"
            )


INV_006 = catalogue_entry(
    "INV-006",
    "Totality on valid input",
    severity="violation",
    scope="reducer",
    source="R§2.3 item 4 (behaviour on invalid payloads is unspecified; on valid ones it must be defined)",
    statement="For every schema-valid state and schema-valid action of the matching kind, the "
    "reducer terminates without raising.",
    note="No step exists when the target raised: the engine's stepper reports a target that "
    "raises on an action the reference model applies as a TARGET-ERROR finding.",
    elsewhere="engine (TARGET-ERROR findings)",
)


# INV-007 (schema validity) is checked per step in published_schema.py.

INV_008 = catalogue_entry(
    "INV-008",
    "Encode/decode round-trip preserves state exactly",
    severity="violation",
    scope="wire",
    source="test-cases/round-trips/* and KNOWN-FIDELITY-GAPS.md; PR #337 review (omitempty)",
    statement="For every reachable state s: decode(encode(s)) == s key-presence sensitively; "
    "absent ≠ [] ≠ null, unknown keys and unknown SessionStatus bits survive, integers above 2³¹ "
    "survive.",
    note="Wire scope: the round-trip fixtures run through the model's codec in `ahp-fuzz "
    "conformance`; the encoders of other implementations need the wire targets (later issue).",
    elsewhere="ahp-fuzz conformance (round-trip fixtures)",
)

INV_009 = catalogue_entry(
    "INV-009",
    "Fixture conformance",
    severity="violation",
    scope="reducer",
    source="types/reducers.test.ts procedure (R§7)",
    statement="All reducer fixtures of the spec folder pass (null read as absent, now = 9999, "
    "actions applied in order, deep equality).",
    note="Checked by `ahp-fuzz conformance --spec DIR`, not per step.",
    elsewhere="ahp-fuzz conformance",
)
