"""Reading chat states for the checks: turns, parts, tool calls and the derived activity.

Written from the spec (guide/state-model.md §Session Status Bitset and §Tool Call Lifecycle,
guide/elicitation.md §Status And Cleanup), independently of the reference reducers, so the
reference model is checked against the spec rather than against itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from harness.reference import status

JSONDict = dict[str, Any]

TERMINAL_TOOL_STATUSES: Final = frozenset({"completed", "cancelled"})
#: Tool-call statuses that wait for the user: confirmation, result review, authentication.
BLOCKING_TOOL_STATUSES: Final = frozenset(
    {"pending-confirmation", "pending-result-confirmation", "auth-required"}
)
#: Fields that identify a tool call (INV-017).
IDENTITY_FIELDS: Final = ("toolCallId", "toolName", "displayName", "intention", "contributor")
#: Keys a `ToolCallResult` may carry (state.schema.json `ToolCallResult`).
RESULT_KEYS: Final = frozenset(
    {"success", "pastTenseMessage", "content", "structuredContent", "error"}
)

#: The three turn-ending actions.
TURN_END: Final = frozenset({"chat/turnComplete", "chat/turnCancelled", "chat/error"})
#: The six tool-call actions that recompute the chat status (REDUCERS.md §5.1).
RECOMPUTING_TOOL_ACTIONS: Final = frozenset(
    {
        "chat/toolCallReady",
        "chat/toolCallConfirmed",
        "chat/toolCallComplete",
        "chat/toolCallResultConfirmed",
        "chat/toolCallAuthRequired",
        "chat/toolCallAuthResolved",
    }
)
TOOL_CALL_ACTIONS: Final = RECOMPUTING_TOOL_ACTIONS | {
    "chat/toolCallStart",
    "chat/toolCallDelta",
    "chat/toolCallContentChanged",
}
#: Actions addressed to the active turn by `turnId` (INV-015).
TURN_SCOPED: Final = (
    TOOL_CALL_ACTIONS
    | TURN_END
    | frozenset({"chat/delta", "chat/reasoning", "chat/responsePart", "chat/usage"})
)

ACTIVITY_NAMES: Final = {
    status.IDLE: "Idle",
    status.ERROR: "Error",
    status.IN_PROGRESS: "InProgress",
    status.INPUT_NEEDED: "InputNeeded",
}


def activity_name(value: int) -> str:
    return f"{value} ({ACTIVITY_NAMES.get(value, 'not an activity value')})"


def active_turn(state: JSONDict) -> JSONDict | None:
    turn = state.get("activeTurn")
    return turn if isinstance(turn, dict) else None


def parts_of(turn: JSONDict | None) -> list[Any]:
    if turn is None:
        return []
    parts = turn.get("responseParts")
    return parts if isinstance(parts, list) else []


def turn_matches(state: JSONDict, action: JSONDict) -> bool:
    """True when `state` has an active turn and the action's `turnId` names it."""
    turn = active_turn(state)
    return turn is not None and turn.get("id") == action.get("turnId")


def tool_call(part: Any) -> JSONDict | None:
    if isinstance(part, dict) and part.get("kind") == "toolCall":
        tc = part.get("toolCall")
        return tc if isinstance(tc, dict) else None
    return None


def is_input_request(part: Any) -> bool:
    return isinstance(part, dict) and part.get("kind") == "inputRequest"


def is_open_input(part: Any) -> bool:
    return is_input_request(part) and part.get("response") is None


def request_id(part: Any) -> Any:
    request = part.get("request") if isinstance(part, dict) else None
    return request.get("id") if isinstance(request, dict) else None


def part_blocks(part: Any) -> bool:
    if is_open_input(part):
        return True
    tc = tool_call(part)
    return tc is not None and tc.get("status") in BLOCKING_TOOL_STATUSES


def derived_activity(state: JSONDict) -> int:
    """The activity a chat should show (without a forced Error)."""
    turn = active_turn(state)
    if turn is None:
        return status.IDLE
    if any(part_blocks(p) for p in parts_of(turn)):
        return status.INPUT_NEEDED
    return status.IN_PROGRESS


def status_of(state: JSONDict) -> int | None:
    value = state.get("status")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def paired_parts(
    before: JSONDict, after: JSONDict, action_type: str, action: JSONDict
) -> tuple[list[Any], list[Any], bool] | None:
    """The response parts of one turn before and after a step, for part-by-part comparison.

    Returns `(before_parts, after_parts, ended)`: within the same active turn (parts are
    append-only there), or — for a turn-ending action on the active turn — the active turn's
    parts against the parts of the turn appended to `turns` (`ended` is True). None when the
    step does not keep a turn to compare (no active turn, `chat/turnStarted`, truncation).
    """
    b_turn = active_turn(before)
    if b_turn is None:
        return None
    if action_type in TURN_END:
        if b_turn.get("id") != action.get("turnId"):
            return None
        turns = after.get("turns")
        if not isinstance(turns, list) or not turns or not isinstance(turns[-1], dict):
            return None
        return parts_of(b_turn), parts_of(turns[-1]), True
    if action_type == "chat/turnStarted":
        return None
    a_turn = active_turn(after)
    if a_turn is None or a_turn.get("id") != b_turn.get("id"):
        return None
    return parts_of(b_turn), parts_of(a_turn), False


def paired_tool_calls(
    before_parts: list[Any], after_parts: list[Any]
) -> Iterator[tuple[int, JSONDict, JSONDict | None]]:
    """`(index, tool call before, tool call after or None)` for each tool-call part before."""
    for i, bp in enumerate(before_parts):
        btc = tool_call(bp)
        if btc is None:
            continue
        ap = after_parts[i] if i < len(after_parts) else None
        yield i, btc, tool_call(ap)
