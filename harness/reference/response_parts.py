"""Response parts and streaming text (REDUCERS.md §5.3).

`chat/responsePart` appends a part verbatim (no status recompute, §11 item 16). `chat/delta` and
`chat/reasoning` append text to the *first* part whose identifier equals `partId`, and only when
that part has the matching kind; a later part with the same id is never considered.
"""

from __future__ import annotations

from .active_turn import active_turn_for, part_identifier, replaced, with_parts
from .profile import Action, Ctx, Handler, State


def response_part(state: State, action: Action, ctx: Ctx) -> State:
    turn = active_turn_for(state, action["turnId"])
    if turn is None:
        return state
    return with_parts(state, turn, [*turn["responseParts"], action["part"]])


def _text_appender(part_kind: str) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        turn = active_turn_for(state, action["turnId"])
        if turn is None:
            return state
        parts = turn["responseParts"]
        part_id = action["partId"]
        for i, part in enumerate(parts):
            if part_identifier(part) != part_id:
                continue
            if part.get("kind") != part_kind:
                return state
            grown = {**part, "content": part["content"] + action["content"]}
            return with_parts(state, turn, replaced(parts, i, grown))
        return state

    handler.__name__ = f"append_{part_kind}"
    return handler


delta = _text_appender("markdown")
reasoning = _text_appender("reasoning")


def response_part_no_error(state: State, action: Action, ctx: Ctx) -> State:
    """0.9.0: an error enters a turn only through `chat/error` (a turn-ending transition), so a
    `chat/responsePart` carrying an error part is a no-op (fixture 270-chat)."""
    part = action["part"]
    if isinstance(part, dict) and part.get("kind") == "error":
        return state
    return response_part(state, action, ctx)


#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: dict[tuple[str, bool], dict[str, Handler]] = {
    ("durable_turn_errors", True): {"chat/responsePart": response_part_no_error},
}
