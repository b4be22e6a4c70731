"""C. `chat/truncated` with an unknown turn while a turn is active (REDUCERS.md §11 item 15).

Two sentences of the spec disagree for this one combination: the `chat/truncated` action doc
says an active turn "is silently dropped", while the guide says "If the turnId is not found …
the action is a no-op". The reducers follow the guide (the active turn survives). INV-020
checks the guide's reading; these variants report the conflict as the known upstream issue it
is, whenever a target keeps the active turn on such a step:

* `INV-020.active` — a step check, when the generated action is that combination;
* `INV-020.active-probe` — asked of every reachable chat state with an active turn, with a
  schema-valid `chat/truncated` naming a turn id that is not in `turns`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._chat import active_turn
from ._json import as_list, fresh, short
from .base import JSONDict, Reducer, Step, invariant

_KNOWN = (
    "REDUCERS.md §11 item 15 (truncated with an unknown turnId is a no-op even with an active "
    "turn; the action doc says the active turn is silently dropped)"
)
_SOURCE = (
    'chat/truncated action doc ("an active turn is silently dropped"); guide/state-model.md '
    '§Chat Truncation ("If the turnId is not found … the action is a no-op")'
)


def _turn_ids(state: JSONDict) -> list[Any]:
    return [t.get("id") for t in as_list(state.get("turns")) if isinstance(t, dict)]


def _kept(before: JSONDict, after: JSONDict, tid: Any) -> str | None:
    turn = active_turn(before)
    if turn is None or tid is None or tid in _turn_ids(before):
        return None
    now = active_turn(after)
    if now is None or now.get("id") != turn.get("id"):
        return None
    return (
        f"chat/truncated({short(tid)}) names no turn while turn {short(turn.get('id'))} is "
        "active: the active turn was kept (guide: no-op), the action doc says it is dropped"
    )


@invariant(
    "INV-020.active",
    "Truncation to an unknown turn drops the active turn",
    severity="known",
    source=_SOURCE,
    kinds={"chat"},
    known_issue=_KNOWN,
    actions={"chat/truncated"},
)
def unknown_truncation_keeps_active(step: Step) -> Iterator[str]:
    """`chat/truncated`: "an active turn is silently dropped" — also when the `turnId` names
    no turn in `turns` (where the guide calls the action a no-op)."""
    kept = _kept(step.before, step.after, step.action.get("turnId"))
    if kept:
        yield kept


@invariant(
    "INV-020.active-probe",
    "Truncation to an unknown turn drops the active turn (probed on reachable chat states)",
    severity="known",
    source=_SOURCE,
    kinds={"chat"},
    probe=True,
    known_issue=_KNOWN,
)
def unknown_truncation_probe(step: Step, reducer: Reducer) -> Iterator[str]:
    """From the step's state with an active turn: `chat/truncated` naming a turn id that is not
    in `turns` drops the active turn, as the action doc says."""
    state = step.before
    if active_turn(state) is None:
        return
    taken = {repr(i) for i in _turn_ids(state)}
    n = 1
    while repr(f"probe-missing-{n}") in taken:
        n += 1
    tid = f"probe-missing-{n}"
    after = reducer("chat", fresh(state), {"type": "chat/truncated", "turnId": tid}, step.now_ms)
    kept = _kept(state, after, tid)
    if kept:
        yield f"probe: {kept}"
