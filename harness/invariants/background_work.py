"""K. A chat's background work (1.0.0): shells and subagents "independent of turn lifetime"
(CHANGELOG 1.0.0; `ChatState.backgroundWork`: "An entry may have been started by an earlier
turn rather than the activeTurn"; fixtures 277–284-chat)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ._json import as_list, same, short
from .base import Step, invariant

_OWN: Final = frozenset({"chat/backgroundWorkSet", "chat/backgroundWorkRemoved"})


def _ids(work: Any) -> list[Any]:
    return [w.get("id") if isinstance(w, dict) else None for w in as_list(work)]


@invariant(
    "INV-X10",
    "Background work is independent of turn lifetime",
    severity="violation",
    source='CHANGELOG 1.0.0 ("chat/backgroundWorkSet and chat/backgroundWorkRemoved actions '
    'independent of turn lifetime"); BackgroundShellWork.id ("unique within the owning chat")',
    kinds={"chat"},
)
def background_work(step: Step) -> Iterator[str]:
    """Only `chat/backgroundWorkSet` / `chat/backgroundWorkRemoved` change `backgroundWork`: a
    turn starting, ending, being resumed or truncated leaves it as it is. Ids are "unique within
    the owning chat across all kinds" (given a unique start); `backgroundWorkRemoved` removes
    exactly the entry with its id."""
    if step.profile.version < (1, 0, 0):
        return
    before, after = step.before.get("backgroundWork"), step.after.get("backgroundWork")
    if step.type not in _OWN:
        if not same(before, after):
            yield f"{step.type} changed backgroundWork: {short(before)} → {short(after)}"
        return
    b_ids, a_ids = _ids(before), _ids(after)
    if len(set(map(str, b_ids))) == len(b_ids) and len(set(map(str, a_ids))) != len(a_ids):
        yield f"{step.type}: background work ids are no longer unique: {a_ids}"
    if step.type == "chat/backgroundWorkRemoved":
        gone = step.action.get("id")
        if gone in a_ids:
            yield f"chat/backgroundWorkRemoved({gone}) left the entry in place"
        if [i for i in b_ids if i != gone] != a_ids:
            yield f"chat/backgroundWorkRemoved({gone}) changed other entries: {b_ids} → {a_ids}"
