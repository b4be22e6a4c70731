"""1.0.0 background work of a chat (`ChatState.backgroundWork`): background shells and
subagents, upserted and removed by `id`, independent of the turn lifetime — no turn action
touches them, and they touch no turn (CHANGELOG 1.0.0; fixtures 277–284-chat).

An entry of an unknown `kind` is kept and replaced by id like any other (fixture 283).
Removing the last entry leaves `[]` (an empty list is never collapsed to absent).
"""

from __future__ import annotations

from .keyed import remove_first, upsert
from .profile import Action, Ctx, Handler, State

KEY = "backgroundWork"


def work_set(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, KEY: upsert(state.get(KEY, []), "id", action["work"])}


def work_removed(state: State, action: Action, ctx: Ctx) -> State:
    items = state.get(KEY)
    if items is None:
        return state
    remaining = remove_first(items, "id", action["id"])
    return state if remaining is items else {**state, KEY: remaining}


HANDLERS: dict[str, Handler] = {
    "chat/backgroundWorkSet": work_set,
    "chat/backgroundWorkRemoved": work_removed,
}
