"""Derived chat status (REDUCERS.md §5.1): the activity bits of a chat follow its active turn.

Activity, in priority order: a forced Error; InputNeeded while the active turn holds an open
input request or a tool call waiting for the user (or for authentication); InProgress while a
turn is active; otherwise Idle. Flags (IsRead, IsArchived) and unknown high bits are kept.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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


def stamped(state: State, ctx: Ctx, at: str | None = None) -> State:
    """`modifiedAt := now` (the injected clock of `ctx`). Under the `clock_from_actions` rule
    (0.9.0 on) the clock is never read: `modifiedAt := at` (a time the action's data gives),
    and an action that gives none leaves `modifiedAt` as it is."""
    if ctx.profile.clock_from_actions:
        return state if at is None or state.get("modifiedAt") == at else {**state, "modifiedAt": at}
    return {**state, "modifiedAt": ctx.now_iso}


def end_time(started_at: Any, duration_ms: Any) -> str | None:
    """`startedAt + duration` in UTC with three fractional digits and `Z` (0.9.0: a turn's end
    stamps the chat with it; fixture 271-turn-end normalizes an offset across a leap day), or
    None when `startedAt` is absent or not an ISO-8601 time."""
    if not isinstance(started_at, str) or isinstance(duration_ms, bool) or not isinstance(duration_ms, int | float):
        return None
    try:
        t = datetime.fromisoformat(started_at)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    try:
        t = t.astimezone(UTC) + timedelta(milliseconds=duration_ms)
    except OverflowError:
        return None
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
