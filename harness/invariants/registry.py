"""The registry: every catalogue entry by id, and `check_step` to run the applicable checks.

`REGISTRY` is built once, at import, from the `Invariant` objects defined in the catalogue
modules, and never changes afterwards. `check_step` is the one entry point the engine calls after
every step; it looks up the checks for the step's state kind and action type in an index built
with the registry, so an unrelated check costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType, ModuleType

from harness.spec.versions import Version, is_known_to, kind_of

from . import annotations as annotation_checks
from . import (
    attachments,
    background_work,
    changeset,
    chat_catalog,
    chat_summary,
    clock,
    core,
    dispatchability,
    divergence,
    late_tool_actions,
    pending,
    published_schema,
    resource_watch,
    result_spread,
    status,
    terminal,
    tool_calls,
    truncation,
    turn_errors,
    turn_loss,
    turns,
    working_directories,
)
from ._json import fresh_copies
from .base import Invariant, JSONDict, Reducer, Step, Violation, invariant
from .live import catalogue as live_catalogue

__all__ = [
    "REGISTRY",
    "InvariantCheckError",
    "ReducerRaised",
    "check_step",
    "for_kind",
    "invariant",
    "sort_key",
]

#: The catalogue modules, each named after a protocol idea.
MODULES: tuple[ModuleType, ...] = (
    core,
    clock,
    published_schema,
    status,
    turns,
    turn_loss,
    truncation,
    late_tool_actions,
    tool_calls,
    result_spread,
    pending,
    chat_catalog,
    turn_errors,
    chat_summary,
    background_work,
    working_directories,
    attachments,
    live_catalogue,
    annotation_checks,
    changeset,
    terminal,
    resource_watch,
    dispatchability,
    divergence,
)

_ID = re.compile(r"^INV-([0-9]{3}|[A-Z][0-9]{2})(\.[a-zA-Z][\w-]*)?$")


def sort_key(inv_id: str) -> tuple[int, str, str]:
    """Catalogue order: INV-001…053 first, then harness additions (INV-X01…), then INV-D01."""
    m = _ID.match(inv_id)
    if not m:
        return (9, inv_id, "")
    number, suffix = m.group(1), m.group(2) or ""
    return (
        (0, number, suffix) if number.isdigit() else (1 if number[0] == "X" else 2, number, suffix)
    )


def _collect(modules: Iterable[ModuleType]) -> Mapping[str, Invariant]:
    found: dict[str, Invariant] = {}
    for module in modules:
        for value in vars(module).values():
            if not isinstance(value, Invariant):
                continue
            if not _ID.match(value.id):
                raise ValueError(f"{module.__name__}: malformed invariant id {value.id!r}")
            other = found.get(value.id)
            if other is not None and other is not value:
                raise ValueError(f"duplicate invariant id {value.id} ({module.__name__})")
            found[value.id] = value
    return MappingProxyType({k: found[k] for k in sorted(found, key=sort_key)})


#: id -> Invariant, in catalogue order. Built at import, never mutated.
REGISTRY: Mapping[str, Invariant] = _collect(MODULES)


@dataclass(frozen=True)
class _Plan:
    """The checks of one state kind, split once so `check_step` does no filtering per step."""

    every: tuple[Invariant, ...]  # step checks for every action
    every_probes: tuple[Invariant, ...]  # probe checks for every action
    by_type: Mapping[
        str, tuple[tuple[Invariant, ...], tuple[Invariant, ...]]
    ]  # type -> (steps, probes)


def _plan(registry: Mapping[str, Invariant], kind: str) -> _Plan:
    checkable = [i for i in registry.values() if i.check is not None and kind in i.kinds]
    typed: dict[str, list[Invariant]] = {}
    for inv in checkable:
        # An action-scoped check looks only at actions of this kind's own family: a foreign
        # action (INV-005) is a no-op for this reducer, whatever the check would say of it.
        for t in sorted(inv.actions or ()):
            if kind_of(t) == kind:
                typed.setdefault(t, []).append(inv)
    return _Plan(
        every=tuple(i for i in checkable if i.actions is None and not i.probe),
        every_probes=tuple(i for i in checkable if i.actions is None and i.probe),
        by_type=MappingProxyType(
            {
                t: (tuple(i for i in v if not i.probe), tuple(i for i in v if i.probe))
                for t, v in typed.items()
            }
        ),
    )


_PLANS: Mapping[str, _Plan] = MappingProxyType(
    {k: _plan(REGISTRY, k) for k in sorted({k for i in REGISTRY.values() for k in i.kinds})}
)
_NONE: tuple[Invariant, ...] = ()
_NO_TYPED = (_NONE, _NONE)


def for_kind(kind: str) -> tuple[Invariant, ...]:
    """Every registered entry (checkable or not) that applies to state kind `kind`."""
    return tuple(inv for inv in REGISTRY.values() if kind in inv.kinds)


def _selected(
    kind: str, action_type: str, version: Version | None, probes: bool
) -> tuple[tuple[Invariant, ...], ...]:
    plan = _PLANS.get(kind)
    if plan is None:
        return ()
    typed = plan.by_type.get(action_type, _NO_TYPED)
    if typed is not _NO_TYPED and version is not None and not is_known_to(action_type, version):
        typed = _NO_TYPED
    if probes:
        return (plan.every, typed[0], plan.every_probes, typed[1])
    return (plan.every, typed[0])


def applicable(kind: str, action_type: str, version: Version | None = None) -> Iterator[Invariant]:
    """The checkable entries to run on a step of `kind` with action `action_type`.

    Checks bound to specific action types run only when `version` (the negotiated protocol
    version, if given) knows the type: otherwise the action is unknown to the reducer and only
    the every-step checks (INV-004 among them) apply.
    """
    for group in _selected(kind, action_type, version, probes=True):
        yield from group


class InvariantCheckError(RuntimeError):
    """A check itself raised: a bug in the harness, never a finding about the target."""


class ReducerRaised(Exception):
    """The target's reducer raised while a probe check was calling it."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


class ProbeSkipped(Exception):
    """The target's reducer is not called with this action: a value class the target hung on
    (engine/retired.py). The probe check that wanted it is skipped, not failed."""


class _GuardedReducer:
    """Wraps the target's reducer so its exceptions inside a probe are told apart from check bugs."""

    __slots__ = ("_reducer",)

    def __init__(self, reducer: Reducer) -> None:
        self._reducer = reducer

    def __call__(self, kind: str, state: JSONDict, action: JSONDict, now_ms: int) -> JSONDict:
        try:
            return self._reducer(kind, state, action, now_ms)
        except ProbeSkipped:
            raise
        except Exception as e:
            raise ReducerRaised(e) from e

    def observe_clock(
        self, kind: str, state: JSONDict, action: JSONDict, now_ms: int
    ) -> tuple[JSONDict, clock.ClockReads] | None:
        """The step re-run with the target's clock reads counted (None: not observable)."""
        try:
            return clock.observe(self._reducer, kind, state, action, now_ms)
        except ProbeSkipped:
            raise
        except Exception as e:
            raise ReducerRaised(e) from e


def check_step(
    step: Step,
    *,
    reducer: Reducer | None = None,
    probes: bool = True,
    only: Iterable[str] | None = None,
) -> list[Violation]:
    """Run every applicable check on `step` and return what they found.

    Probe checks run only when `reducer` (the target's reducer) is given and `probes` is true.
    `only` restricts the run to the given ids. A target reducer that raises inside a probe is a
    finding of that probe's invariant; any other exception raised by a check is a harness bug
    and is re-raised as `InvariantCheckError`.

    A target state that is not a JSON object is reported once, as INV-007, and nothing else is
    checked on that step; an action that is not an object is checked as an action without a
    type (an unknown action, INV-004).
    """
    wanted = frozenset(only) if only is not None else None
    if not isinstance(step.after, dict):
        if wanted is not None and "INV-007" not in wanted:
            return []
        return [
            Violation(
                "INV-007",
                "violation",
                f"the target returned a {type(step.after).__name__}, not a state object",
            )
        ]
    if not isinstance(step.before, dict):
        return []  # the step that produced it was reported already
    if not isinstance(step.action, dict):
        step = replace(step, action={})
    guarded = _GuardedReducer(reducer) if reducer is not None and probes else None
    found: list[Violation] = []
    with fresh_copies():  # the probes' copies of this step's values, cached by identity
        for group in _selected(step.kind, step.type, step.profile.version, guarded is not None):
            for inv in group:
                if wanted is None or inv.id in wanted:
                    _run(inv, step, guarded, found)
    return found


def _run(inv: Invariant, step: Step, reducer: Reducer | None, found: list[Violation]) -> None:
    check = inv.check
    assert check is not None
    try:
        for message in check(step, reducer) if inv.probe else check(step):
            found.append(Violation(inv.id, inv.severity, message))
    except ReducerRaised as e:
        found.append(Violation(inv.id, inv.severity, f"the reducer raised during the probe: {e}"))
    except ProbeSkipped:
        return
    except Exception as e:
        raise InvariantCheckError(
            f"check {inv.id} raised {type(e).__name__}: {e} "
            f"(kind={step.kind}, action={step.type!r}) — a harness bug"
        ) from e
