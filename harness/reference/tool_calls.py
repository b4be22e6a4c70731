"""The tool-call state machine of the chat reducer (REDUCERS.md §5.4, §7b rows 4–9, §7b.2).

Every tool-call action names `turnId` and `toolCallId`. It is applied to *every* `toolCall` part
of the active turn carrying that id (duplicates are possible); a part whose status the action
does not accept is left alone. Each transition below takes the current tool call and returns
the next one, or the very same object when its guard refuses.

Each transition builds the next tool call from scratch: the common base fields (`toolCallId`,
`toolName`, `displayName`, `intention`, `contributor`, `_meta`) plus the fields its target status
carries. Anything else is dropped. Absent values are simply not written (never `None`).

Six actions recompute the chat status afterwards, even when no tool call changed (§5.1, §11
item 18): Ready, Confirmed, Complete, ResultConfirmed, AuthRequired, AuthResolved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .active_turn import active_turn_for, with_parts
from .chat_status import recompute
from .profile import Action, Ctx, Handler, State

ToolCall = dict[str, Any]
Transition = Callable[[ToolCall, Action, Ctx], ToolCall]

STREAMING: Final = "streaming"
PENDING_CONFIRMATION: Final = "pending-confirmation"
RUNNING: Final = "running"
AUTH_REQUIRED: Final = "auth-required"
PENDING_RESULT_CONFIRMATION: Final = "pending-result-confirmation"
COMPLETED: Final = "completed"
CANCELLED: Final = "cancelled"

TERMINAL_STATUSES: Final = frozenset({COMPLETED, CANCELLED})
READY_FROM: Final = frozenset({STREAMING, RUNNING, PENDING_CONFIRMATION})

#: Confirmation details a Ready without `confirmed` writes (payload, else kept while pending).
CONFIRMATION_FIELDS: Final = ("confirmationTitle", "riskAssessment", "edits", "editable", "options")
#: What a result confirmation keeps from the pending-result-confirmation call.
RESULT_FIELDS: Final = ("success", "pastTenseMessage", "content", "structuredContent", "error")


# -- building tool calls ----------------------------------------------------------------------


def _build(status: str, fields: Mapping[str, Any]) -> ToolCall:
    """A tool call with `status` and every field of `fields` whose value is not absent (None)."""
    return {"status": status, **{k: v for k, v in fields.items() if v is not None}}


def _overlay(tool_call: ToolCall, patch: Mapping[str, Any]) -> ToolCall:
    """Copy every key of `patch` on top of `tool_call`; a None value clears that key."""
    out = dict(tool_call)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _base(tc: ToolCall, action: Action) -> dict[str, Any]:
    """The fields every transition carries; `_meta` comes from the action when it has one."""
    meta = action.get("_meta")
    return {
        "toolCallId": tc.get("toolCallId"),
        "toolName": tc.get("toolName"),
        "displayName": tc.get("displayName"),
        "intention": tc.get("intention"),
        "contributor": tc.get("contributor"),
        "_meta": meta if meta is not None else tc.get("_meta"),
    }


def _kept(tc: ToolCall, *keys: str) -> dict[str, Any]:
    return {k: tc.get(k) for k in keys}


def _selected_option(tc: ToolCall, option_id: Any) -> Any:
    """The first of the call's `options` whose id is `option_id` (None when absent/unknown)."""
    if option_id is None:
        return None
    return next((o for o in tc.get("options", ()) if o.get("id") == option_id), None)


# -- Ready: contributor ownership and tool-input fallback -------------------------------------


def _ready_contributor(current: Any, proposed: Any, tc: ToolCall, ctx: Ctx) -> Any:
    """The §7b.2 ownership rule: client execution ownership is fixed at `chat/toolCallStart`."""
    if proposed is None:
        return current
    call = tc.get("toolCallId")
    if current is not None and current.get("kind") == "client":
        if proposed.get("kind") == "client" and proposed.get("clientId") == current.get("clientId"):
            return proposed
        ctx.warn(
            f"chat/toolCallReady {call!r}: ignoring contributor change away from a client owner"
        )
        return current
    if proposed.get("kind") == "client":
        ctx.warn(f"chat/toolCallReady {call!r}: ignoring late client contributor")
        return current
    return proposed


def _ready_tool_input(tc: ToolCall, action: Action, confirmed: bool, modern: bool) -> Any:
    """§7b row 7: payload input wins; otherwise the fallback depends on version and path."""
    payload = action.get("toolInput")
    if payload is not None:
        return payload
    previous = tc.get("status")
    if modern:
        return None if previous == STREAMING else tc.get("toolInput")
    if confirmed or previous != PENDING_CONFIRMATION:
        return None
    return tc.get("toolInput")


def ready(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    previous = tc.get("status")
    if previous not in READY_FROM:
        return tc
    modern = ctx.profile.at_least("0.7.0")
    base = _base(tc, action)
    if modern:
        base["contributor"] = _ready_contributor(
            tc.get("contributor"), action.get("contributor"), tc, ctx
        )
        intention = action.get("intention")
        if intention is not None:
            base["intention"] = intention
    confirmed = action.get("confirmed")
    fields = {
        **base,
        "invocationMessage": action.get("invocationMessage"),
        "toolInput": _ready_tool_input(tc, action, confirmed is not None, modern),
    }
    if confirmed is not None:
        return _build(RUNNING, {**fields, "confirmed": confirmed})
    keep_previous = previous == PENDING_CONFIRMATION
    for key in CONFIRMATION_FIELDS:
        value = action.get(key)
        fields[key] = tc.get(key) if value is None and keep_previous else value
    return _build(PENDING_CONFIRMATION, fields)


# -- the other transitions --------------------------------------------------------------------


def delta(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    """Streaming only: grow `partialInput` (absent `content` appends nothing, §7b row 4)."""
    if tc.get("status") != STREAMING:
        return tc
    patch: dict[str, Any] = {}
    content = action.get("content")
    if content is not None:
        patch["partialInput"] = tc.get("partialInput", "") + content
    for key in ("invocationMessage", "_meta"):
        if action.get(key) is not None:
            patch[key] = action[key]
    return {**tc, **patch} if patch else tc


def _edited_tool_input(tc: ToolCall, edited: Any, modern: bool) -> Any:
    """§7b row 9: in 0.7.0 an edit replaces only a string input (a ContentRef or an absent
    input is kept as it is); in 0.6.0 the edit always wins."""
    current = tc.get("toolInput")
    if edited is None:
        return current
    if not modern or isinstance(current, str):
        return edited
    return current


def confirmed(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    if tc.get("status") != PENDING_CONFIRMATION:
        return tc
    fields = {
        **_base(tc, action),
        **_kept(tc, "invocationMessage", "toolInput"),
        "selectedOption": _selected_option(tc, action.get("selectedOptionId")),
    }
    if action["approved"]:
        modern = ctx.profile.at_least("0.7.0")
        fields["toolInput"] = _edited_tool_input(tc, action.get("editedToolInput"), modern)
        return _build(RUNNING, {**fields, "confirmed": action.get("confirmed")})
    return _build(
        CANCELLED,
        {**fields, **{k: action.get(k) for k in ("reason", "reasonMessage", "userSuggestion")}},
    )


def complete(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    """Running / pending-confirmation / auth-required → completed (or result review); then the
    whole `result` is copied on top, extra keys included (§5.4 note, §11 item 12)."""
    result = action["result"]
    previous = tc.get("status")
    target = PENDING_RESULT_CONFIRMATION if action.get("requiresResultConfirmation") else COMPLETED
    fields = {**_base(tc, action), **_kept(tc, "invocationMessage", "toolInput")}
    if previous == RUNNING:
        fields.update(_kept(tc, "confirmed", "selectedOption"))
    elif previous == PENDING_CONFIRMATION:
        fields["confirmed"] = "not-needed"
    elif previous == AUTH_REQUIRED and not result.get("success"):
        target = COMPLETED
        fields.update(_kept(tc, "confirmed", "selectedOption", "content"))
    else:
        return tc
    return _overlay(_build(target, fields), result)


def result_confirmed(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    if tc.get("status") != PENDING_RESULT_CONFIRMATION:
        return tc
    fields = {
        **_base(tc, action),
        **_kept(tc, "invocationMessage", "toolInput"),
    }
    if action["approved"]:
        return _build(
            COMPLETED, {**fields, **_kept(tc, "confirmed", "selectedOption", *RESULT_FIELDS)}
        )
    return _build(
        CANCELLED, {**fields, "reason": "result-denied", "selectedOption": tc.get("selectedOption")}
    )


def content_changed(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    """Running only: replace the live `content`; `_meta` only when the action carries one."""
    if tc.get("status") != RUNNING:
        return tc
    patch = {"content": action["content"]}
    if action.get("_meta") is not None:
        patch["_meta"] = action["_meta"]
    return _overlay(tc, patch)


def auth_required(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    """Running calls of an MCP contributor only."""
    contributor = tc.get("contributor")
    if tc.get("status") != RUNNING or contributor is None or contributor.get("kind") != "mcp":
        return tc
    return _build(
        AUTH_REQUIRED,
        {
            **_base(tc, action),
            **_kept(tc, "invocationMessage", "toolInput", "confirmed", "selectedOption", "content"),
            "auth": action["auth"],
        },
    )


def auth_resolved(tc: ToolCall, action: Action, ctx: Ctx) -> ToolCall:
    if tc.get("status") != AUTH_REQUIRED:
        return tc
    return _build(
        RUNNING,
        {
            **_base(tc, action),
            **_kept(tc, "invocationMessage", "toolInput", "confirmed", "selectedOption", "content"),
        },
    )


def cancelled_at_turn_end(tc: ToolCall) -> ToolCall:
    """End-of-turn force-cancel (§5.2) of a call that is not yet completed/cancelled."""
    if tc.get("status") in TERMINAL_STATUSES:
        return tc
    streaming = tc.get("status") == STREAMING
    return _build(
        CANCELLED,
        {
            **_kept(
                tc, "toolCallId", "toolName", "displayName", "intention", "contributor", "_meta"
            ),
            "invocationMessage": (tc.get("invocationMessage") or "")
            if streaming
            else tc.get("invocationMessage"),
            "toolInput": None if streaming else tc.get("toolInput"),
            "reason": "skipped",
        },
    )


def close_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The response parts of an ending turn: every unfinished tool call force-cancelled."""
    out = []
    for part in parts:
        if part.get("kind") == "toolCall":
            tc = part["toolCall"]
            closed = cancelled_at_turn_end(tc)
            if closed is not tc:
                part = {**part, "toolCall": closed}
        out.append(part)
    return out


# -- applying transitions to the active turn ---------------------------------------------------


def _apply(state: State, action: Action, ctx: Ctx, transition: Transition) -> State:
    """Apply `transition` to every matching tool call of the targeted active turn."""
    turn = active_turn_for(state, action["turnId"])
    if turn is None:
        return state
    call_id = action["toolCallId"]
    parts = turn["responseParts"]
    changed: list[dict[str, Any]] | None = None
    for i, part in enumerate(parts):
        if part.get("kind") != "toolCall":
            continue
        tc = part["toolCall"]
        if tc.get("toolCallId") != call_id:
            continue
        nxt = transition(tc, action, ctx)
        if nxt is tc:
            continue
        if changed is None:
            changed = list(parts)
        changed[i] = {**part, "toolCall": nxt}
    return state if changed is None else with_parts(state, turn, changed)


def _handler(transition: Transition, *, recomputes: bool) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        updated = _apply(state, action, ctx, transition)
        return recompute(updated) if recomputes else updated

    handler.__name__ = f"tool_call_{transition.__name__}"
    handler.__doc__ = transition.__doc__
    return handler


def start(state: State, action: Action, ctx: Ctx) -> State:
    """Append a new streaming tool call to the targeted active turn (no status recompute)."""
    turn = active_turn_for(state, action["turnId"])
    if turn is None:
        return state
    fields = {"toolCallId": action["toolCallId"]}
    fields.update(
        {k: action.get(k) for k in ("toolName", "displayName", "intention", "contributor", "_meta")}
    )
    part = {"kind": "toolCall", "toolCall": _build(STREAMING, fields)}
    return with_parts(state, turn, [*turn["responseParts"], part])


HANDLERS: dict[str, Handler] = {
    "chat/toolCallStart": start,
    "chat/toolCallDelta": _handler(delta, recomputes=False),
    "chat/toolCallReady": _handler(ready, recomputes=True),
    "chat/toolCallConfirmed": _handler(confirmed, recomputes=True),
    "chat/toolCallComplete": _handler(complete, recomputes=True),
    "chat/toolCallResultConfirmed": _handler(result_confirmed, recomputes=True),
    "chat/toolCallContentChanged": _handler(content_changed, recomputes=False),
    "chat/toolCallAuthRequired": _handler(auth_required, recomputes=True),
    "chat/toolCallAuthResolved": _handler(auth_resolved, recomputes=True),
}
