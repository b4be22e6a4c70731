"""Turn lifecycle, usage, truncation and history paging (REDUCERS.md §5.2, §5.5).

`chat/turnStarted` replaces any active turn without a trace (§11 item 14). The three turn-ending
actions archive the active turn into `turns`, force-cancelling unfinished tool calls, and leave
the chat Idle (or Error for `chat/error`).
"""

from __future__ import annotations

from typing import Any

from . import status
from .active_turn import active_turn_for
from .chat_status import end_time, recompute, stamped, with_status
from .pending_messages import consume
from .profile import Action, Ctx, Handler, State
from .tool_calls import close_parts


def _without(state: State, *keys: str) -> State:
    return {k: v for k, v in state.items() if k not in keys}


def _compact(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def turn_started(state: State, action: Action, ctx: Ctx) -> State:
    turn = _compact(
        {
            "id": action["turnId"],
            "startedAt": action.get("startedAt"),
            "message": action.get("message"),
            "responseParts": [],
        }
    )
    nxt = {**state, "activeTurn": turn}
    message_id = action.get("queuedMessageId")
    if isinstance(message_id, str) and message_id:
        nxt = consume(nxt, message_id)
    nxt = recompute(nxt)
    nxt = with_status(nxt, status.set_flag(nxt.get("status", 0), status.IS_READ, False))
    started = action.get("startedAt")
    return stamped(nxt, ctx, started if isinstance(started, str) else None)


def _turn_ender(outcome: str, *, durable_error: bool = False) -> Handler:
    """`chat/turnComplete` / `chat/turnCancelled` / `chat/error` (outcome = the Turn `state`).

    Up to 0.8.0 `chat/error` stores its `error` on the turn; from 0.9.0 (`durable_error`) its
    `part` — an ErrorResponsePart — is appended to the turn's response parts and the turn has
    no `error` key. The chat's `modifiedAt` is the clock, or (0.9.0) `startedAt + duration`."""
    forced = status.ERROR if outcome == "error" else None

    def handler(state: State, action: Action, ctx: Ctx) -> State:
        turn = active_turn_for(state, action["turnId"])
        if turn is None:
            return state
        parts = close_parts(turn["responseParts"])
        if durable_error:
            parts = [*parts, action["part"]]
        duration = max(0, action["duration"])
        record = _compact(
            {
                "id": turn["id"],
                "startedAt": turn.get("startedAt"),
                "duration": duration,
                "message": turn.get("message"),
                "responseParts": parts,
                "usage": turn.get("usage"),
                "state": outcome,
                "error": action.get("error") if outcome == "error" and not durable_error else None,
            }
        )
        nxt = {**_without(state, "activeTurn"), "turns": [*state["turns"], record]}
        return stamped(recompute(nxt, forced=forced), ctx, end_time(turn.get("startedAt"), duration))

    handler.__name__ = f"turn_{outcome}"
    return handler


def resumable(turn: Any) -> bool:
    """0.9.0: a finished turn `chat/turnResume` may reopen — state `error` and a final response
    part that is an error marked `resumable`."""
    if not isinstance(turn, dict) or turn.get("state") != "error":
        return False
    parts = turn.get("responseParts") or []
    last = parts[-1] if parts else None
    return isinstance(last, dict) and last.get("kind") == "error" and last.get("resumable") is True


def turn_resume(state: State, action: Action, ctx: Ctx) -> State:
    """0.9.0 `chat/turnResume {turnId}`: the latest turn, when it is `turnId` and resumable and
    no turn is active, becomes the active turn again — its message, response parts and usage
    intact, without `duration` and `state`. Anything else is a no-op (fixtures 263–267)."""
    turns = state.get("turns") or []
    if state.get("activeTurn") is not None or not turns:
        return state
    last = turns[-1]
    if last.get("id") != action["turnId"] or not resumable(last):
        return state
    reopened = _without(last, "duration", "state", "error")
    nxt = {**state, "turns": turns[:-1], "activeTurn": reopened}
    return stamped(recompute(nxt), ctx)


def usage(state: State, action: Action, ctx: Ctx) -> State:
    turn = active_turn_for(state, action["turnId"])
    if turn is None:
        return state
    value = action.get("usage")
    new_turn = {**turn, "usage": value} if value is not None else _without(turn, "usage")
    return {**state, "activeTurn": new_turn}


def truncated(state: State, action: Action, ctx: Ctx) -> State:
    """Without `turnId`: drop all history (and the paging cursor). With it: keep history up to
    and including the first turn of that id; an unknown id is a no-op even with an active turn.
    Either way the active turn is dropped and the chat becomes Idle."""
    turn_id = action.get("turnId")
    if turn_id is None:
        nxt = {**_without(state, "activeTurn", "turnsNextCursor"), "turns": []}
    else:
        turns = state["turns"]
        keep = next((i for i, t in enumerate(turns) if t.get("id") == turn_id), None)
        if keep is None:
            return state
        nxt = {**_without(state, "activeTurn"), "turns": turns[: keep + 1]}
    return stamped(recompute(nxt), ctx)  # 0.9.0: no time in the action, modifiedAt stays


def turns_loaded(state: State, action: Action, ctx: Ctx) -> State:
    """Prepend an older page of history, skipping turns whose id is already loaded (duplicates
    within the page itself are kept). `turnsNextCursor` follows the payload."""
    turns = state["turns"]
    known = {t.get("id") for t in turns}
    older = [t for t in action["turns"] if t.get("id") not in known]
    nxt = {**state, "turns": [*older, *turns]}
    cursor = action.get("turnsNextCursor")
    return (
        {**nxt, "turnsNextCursor": cursor}
        if cursor is not None
        else _without(nxt, "turnsNextCursor")
    )


HANDLERS: dict[str, Handler] = {
    "chat/turnStarted": turn_started,
    "chat/turnComplete": _turn_ender("complete"),
    "chat/turnCancelled": _turn_ender("cancelled"),
    "chat/error": _turn_ender("error"),
    "chat/usage": usage,
    "chat/truncated": truncated,
    "chat/turnsLoaded": turns_loaded,
    "chat/turnResume": turn_resume,
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: dict[tuple[str, bool], dict[str, Handler]] = {
    ("durable_turn_errors", True): {"chat/error": _turn_ender("error", durable_error=True)},
}
