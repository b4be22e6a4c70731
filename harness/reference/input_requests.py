"""Input requests (elicitation) inside the active turn (REDUCERS.md §5.8).

An *open* request is an `inputRequest` part of the active turn without a `response`. Draft
answers live in `request.answers`; an emptied answer map is removed. All three actions stamp
`modifiedAt` on their non-no-op paths; requested and completed also recompute the status.
"""

from __future__ import annotations

from typing import Any

from . import status
from .active_turn import replaced, with_parts
from .chat_status import recompute, stamped, with_status
from .profile import Action, Ctx, Handler, State


def _open_request(parts: list[dict[str, Any]], request_id: Any) -> int | None:
    """Index of the first open input-request part with that request id."""
    for i, part in enumerate(parts):
        if (
            part.get("kind") == "inputRequest"
            and part.get("response") is None
            and part["request"].get("id") == request_id
        ):
            return i
    return None


def _with_answers(request: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
    """`request` whose `answers` are `answers`, or without the key when the map is empty."""
    out = {k: v for k, v in request.items() if k != "answers"}
    if answers:
        out["answers"] = answers
    return out


def input_requested(state: State, action: Action, ctx: Ctx) -> State:
    """Upsert an open request by id (answers kept unless the payload brings its own); a request
    whose earlier part is already answered gets a new part. Then status recompute + unread."""
    turn = state.get("activeTurn")
    if turn is None:
        return state
    request = action["request"]
    parts = turn["responseParts"]
    i = _open_request(parts, request["id"])
    if i is None:
        parts = [*parts, {"kind": "inputRequest", "request": request}]
    else:
        if request.get("answers") is None and parts[i]["request"].get("answers") is not None:
            request = {**request, "answers": parts[i]["request"]["answers"]}
        parts = replaced(parts, i, {"kind": "inputRequest", "request": request})
    nxt = recompute(with_parts(state, turn, parts))
    nxt = with_status(nxt, status.set_flag(nxt.get("status", 0), status.IS_READ, False))
    return stamped(nxt, ctx)


def input_answer_changed(state: State, action: Action, ctx: Ctx) -> State:
    """Set (or, without `answer`, delete) one draft answer of an open request. No status change."""
    turn = state.get("activeTurn")
    if turn is None:
        return state
    parts = turn["responseParts"]
    i = _open_request(parts, action["requestId"])
    if i is None:
        return state
    part = parts[i]
    answers = dict(part["request"].get("answers", {}))
    answer = action.get("answer")
    if answer is None:
        answers.pop(action["questionId"], None)
    else:
        answers[action["questionId"]] = answer
    grown = {**part, "request": _with_answers(part["request"], answers)}
    return stamped(with_parts(state, turn, replaced(parts, i, grown)), ctx)


def input_completed(state: State, action: Action, ctx: Ctx) -> State:
    """Record the response (payload answers overlaid on the drafts); the part stays in place."""
    turn = state.get("activeTurn")
    if turn is None:
        return state
    parts = turn["responseParts"]
    i = _open_request(parts, action["requestId"])
    if i is None:
        return state
    part = parts[i]
    answers = {**part["request"].get("answers", {}), **(action.get("answers") or {})}
    done = {
        **part,
        "request": _with_answers(part["request"], answers),
        "response": action["response"],
    }
    return stamped(recompute(with_parts(state, turn, replaced(parts, i, done))), ctx)


HANDLERS: dict[str, Handler] = {
    "chat/inputRequested": input_requested,
    "chat/inputAnswerChanged": input_answer_changed,
    "chat/inputCompleted": input_completed,
}
