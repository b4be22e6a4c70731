"""Chat channel reducer (`ahp-chat:/<id>`, REDUCERS.md §5, §7b, §8.4).

`HANDLERS` maps each `chat/*` action type (29 in 0.7.0, 37 in 1.0.0) to a small pure function
`(state, action, ctx) -> state`. The handlers live in modules named after the protocol idea
they implement:

* `turns` — turn lifecycle, usage, truncation, history paging (§5.2, §5.5)
* `response_parts` — response parts and streaming text (§5.3)
* `tool_calls` — the tool-call state machine (§5.4, §7b rows 4–9, §7b.2)
* `pending_messages` — steering and queued messages (§5.6)
* `input_requests` — elicitation (§5.8)
* `chat_status` — the derived status shared by all of them (§5.1)
* `chat_flags`, `background_work` — the 1.0.0 chat fields

The version-gated 0.6.0 behaviours are chosen inside the handlers from `ctx.profile`; action
types newer than the profile never reach this table (the dispatcher filters them).
"""

from __future__ import annotations

from . import (
    background_work,
    chat_flags,
    input_requests,
    pending_messages,
    response_parts,
    tool_calls,
    turns,
)
from .keyed import field_handler
from .profile import Handler, RuleHandlers, merge_rule_handlers
from .working_directories import directory_removed, directory_set

HANDLERS: dict[str, Handler] = {
    **turns.HANDLERS,
    "chat/responsePart": response_parts.response_part,
    "chat/delta": response_parts.delta,
    "chat/reasoning": response_parts.reasoning,
    **tool_calls.HANDLERS,
    **pending_messages.HANDLERS,
    **input_requests.HANDLERS,
    "chat/activityChanged": field_handler("activity", clear_if_absent=True),
    "chat/draftChanged": field_handler("draft", clear_if_absent=True),
    "chat/workingDirectorySet": directory_set,
    "chat/workingDirectoryRemoved": directory_removed,
    **chat_flags.HANDLERS,
    **background_work.HANDLERS,
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: RuleHandlers = merge_rule_handlers(turns.RULE_HANDLERS, response_parts.RULE_HANDLERS)
