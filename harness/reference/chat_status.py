"""Derived chat status (REDUCERS.md §5.1): the activity bits of a chat follow its active turn.

Activity, in priority order: a forced Error; InputNeeded while the active turn holds an open
input request or a tool call waiting for the user (or for authentication); InProgress while a
turn is active; otherwise Idle. Flags (IsRead, IsArchived) and unknown high bits are kept.
"""

from __future__ import annotations

from typing import Any, Final

from . import status
from .profile import Ctx, State

#: Tool-call statuses that block on the user (confirmation, result review, authentication).
BLOCKING_TOOL_STATUSES: Final = frozenset(
    {"pending-confirmation", "pending-result-confirmation", "auth-required"}
)


def _part_blocks(part: Any) -> bool:
    kind = part.get("kind")
    if kind == "inputRequest":
        return part.get("response") is None
    if kind == "toolCall":
        return part["toolCall"].get("status") in BLOCKING_TOOL_STATUSES
    return False


def derived_activity(state: State) -> int:
    turn = state.get("activeTurn")
    if turn is None:
        return status.IDLE
    if any(_part_blocks(p) for p in turn["responseParts"]):
        return status.INPUT_NEEDED
    return status.IN_PROGRESS


def with_status(state: State, value: int) -> State:
    """`state` with `status := value`; the same object when the status does not change."""
    if state.get("status") == value:
        return state
    return {**state, "status": value}


def recompute(state: State, *, forced: int | None = None) -> State:
    """Re-derive the activity bits of `state` (or force `forced`), keeping every other bit."""
    activity = forced if forced is not None else derived_activity(state)
    return with_status(state, status.with_activity(state.get("status", 0), activity))


def stamped(state: State, ctx: Ctx) -> State:
    """`modifiedAt := now` (the injected clock of `ctx`)."""
    return {**state, "modifiedAt": ctx.now_iso}
