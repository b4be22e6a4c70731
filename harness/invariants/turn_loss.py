"""C. Turns are never lost and turn ids stay unique (INVARIANTS.md INV-022; REDUCERS.md §11 item 14).

INV-022 is a host property (a host must reject `chat/turnStarted` over an active turn, or end
the previous turn first); the reducers do not enforce it. Two catalogue variants report what
the reducers do, as the known upstream gap it is:

* `INV-022.reducer` — a step check: `chat/turnStarted` over an active turn discarded that turn
  without a trace, or `chat/turnsLoaded` left duplicate turn ids;
* `INV-022.probe` — the same two questions asked of every reachable chat state that has an
  active turn (or completed turns), so a plain run sees the gap even when the generator never
  happens to start a turn over an active one: the probe sends a schema-valid `turnStarted`
  with a fresh id (the active turn's own message and start time) and a `turnsLoaded` batch
  that holds one new turn twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from ._chat import active_turn
from ._json import as_list, fresh, short
from .base import JSONDict, Reducer, Step, invariant

_KNOWN = "REDUCERS.md §11 item 14 (turnStarted over an active turn discards it; turnsLoaded keeps in-batch duplicates)"
_SOURCE = 'ChatState.turns ("Completed turns"); INVARIANTS.md INV-022; R§5.2, R§5.5'


def _ids(state: JSONDict) -> list[Any]:
    return [t.get("id") for t in as_list(state.get("turns")) if isinstance(t, dict)]


def _lost_turn(before: JSONDict, after: JSONDict, action: JSONDict) -> str | None:
    """The message when `chat/turnStarted` dropped the active turn of `before`."""
    old = active_turn(before)
    if old is None:
        return None
    old_id = old.get("id")
    now = active_turn(after)
    if (now is not None and now.get("id") == old_id) or old_id in _ids(after):
        return None
    return (
        f"chat/turnStarted({short(action.get('turnId'))}) over active turn {short(old_id)} "
        "discarded it: it is neither active nor in turns"
    )


def _duplicates(ids: Iterable[Any]) -> list[Any]:
    counts = Counter(repr(i) for i in ids)
    seen: list[Any] = []
    for i in ids:
        if counts[repr(i)] > 1 and i not in seen:
            seen.append(i)
    return seen


def _new_duplicates(before: JSONDict, after: JSONDict) -> list[Any]:
    old = {repr(i) for i in _duplicates(_ids(before))}
    return [i for i in _duplicates(_ids(after)) if repr(i) not in old]


@invariant(
    "INV-022.reducer",
    "Turns are never lost and turn ids stay unique, across reducer steps",
    severity="known",
    source=_SOURCE,
    kinds={"chat"},
    known_issue=_KNOWN,
    actions={"chat/turnStarted", "chat/turnsLoaded"},
)
def turns_kept(step: Step) -> Iterator[str]:
    """A started turn always ends up in `turns` unless removed by `chat/truncated`, and ids in
    `turns` plus `activeTurn.id` are pairwise distinct."""
    if step.type == "chat/turnStarted":
        lost = _lost_turn(step.before, step.after, step.action)
        if lost:
            yield lost
    elif step.type == "chat/turnsLoaded":
        dup = _new_duplicates(step.before, step.after)
        if dup:
            yield f"chat/turnsLoaded left duplicate turn ids {short(dup)} in turns"


def _fresh_id(taken: Iterable[Any], stem: str) -> str:
    used = {repr(t) for t in taken}
    n = 1
    while repr(f"{stem}-{n}") in used:
        n += 1
    return f"{stem}-{n}"


def _probe_turn(state: JSONDict) -> JSONDict | None:
    """A completed turn of `state` to copy for a turnsLoaded batch (None if it has none)."""
    for t in as_list(state.get("turns")):
        if isinstance(t, dict) and isinstance(t.get("message"), dict):
            return t
    return None


@invariant(
    "INV-022.probe",
    "Turns are never lost and turn ids stay unique (probed on reachable chat states)",
    severity="known",
    source=_SOURCE,
    kinds={"chat"},
    probe=True,
    known_issue=_KNOWN,
)
def turns_kept_probe(step: Step, reducer: Reducer) -> Iterator[str]:
    """From the step's state: a `chat/turnStarted` with a fresh id over the active turn must
    not make that turn vanish; a `chat/turnsLoaded` batch carrying one new turn twice must not
    leave two turns with the same id."""
    state = step.before
    taken = [*_ids(state), *([t.get("id")] if (t := active_turn(state)) else [])]
    turn = active_turn(state)
    if turn is not None and isinstance(turn.get("message"), dict):
        action = {
            "type": "chat/turnStarted",
            "turnId": _fresh_id(taken, "probe-turn"),
            "startedAt": turn.get("startedAt", "1970-01-01T00:00:00.000Z"),
            "message": fresh(turn["message"]),
        }
        after = reducer("chat", fresh(state), fresh(action), step.now_ms)
        lost = _lost_turn(state, after, action)
        if lost:
            yield f"probe: {lost}"
    old = _probe_turn(state)
    if old is not None:
        twin = {**fresh(old), "id": _fresh_id(taken, "probe-loaded")}
        action = {"type": "chat/turnsLoaded", "turns": [twin, fresh(twin)]}
        after = reducer("chat", fresh(state), action, step.now_ms)
        dup = _new_duplicates(state, after)
        if dup:
            yield f"probe: chat/turnsLoaded with one new turn twice left duplicate turn ids {short(dup)}"
