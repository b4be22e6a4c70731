"""Addressing the active turn and its response parts (REDUCERS.md §5.2, §5.3)."""

from __future__ import annotations

from typing import Any

from .profile import State

Part = dict[str, Any]


def active_turn_for(state: State, turn_id: Any) -> dict[str, Any] | None:
    """The active turn when its id is `turn_id`; None when there is none or it is another turn."""
    turn = state.get("activeTurn")
    if turn is None or turn.get("id") != turn_id:
        return None
    return turn


def with_parts(state: State, turn: dict[str, Any], parts: list[Part]) -> State:
    """`state` whose active turn `turn` now has `parts` as its response parts."""
    return {**state, "activeTurn": {**turn, "responseParts": parts}}


def replaced(items: list[Any], index: int, item: Any) -> list[Any]:
    """A copy of `items` with position `index` holding `item`."""
    out = list(items)
    out[index] = item
    return out


def part_identifier(part: Part) -> Any:
    """The id a `partId` names: a tool call's `toolCallId`, else a top-level `id` (markdown,
    reasoning); None for parts whose id is nested or missing (contentRef, systemNotification,
    inputRequest)."""
    if part.get("kind") == "toolCall":
        return part["toolCall"].get("toolCallId")
    return part.get("id")
