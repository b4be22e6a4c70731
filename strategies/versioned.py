"""Generation in a version's own shapes: what a state or an action of profile P looks like
when P is not the version the base strategies draw (0.7.0).

The base strategies (`states`, `actions`) draw 0.7.0 shapes; each row here says what another
version changed, as data: `(from, before, kind or action type, shaper)` holds for versions
`from <= v < before`, and the shaper rewrites a drawn value into that version's shape (drawing
what the new shape needs). A state or step drawn for profile P then validates against P's own
schemas (tests/test_versioned_generation.py draws them and asks jsonschema-rs).

* 0.6.0 (before multiroot): no `workingDirectories` anywhere; a chat origin is only `user`
  (0.6.0's `ChatOrigin` is a `oneOf` without constants: any richer origin matches two
  members); `toolInput` is a string; a file edit's `content` is its URI string; tool schemas
  carry only `type`; the `{items: [...]}` wrappers (resource-watch globs and changes, edit
  previews) hold a string (0.6.0's generated schema types them so); no chat attachments; a
  `chat/toolCallDelta` carries `content`.
* 0.9.0 / 1.0.0: terminal `lifecycle` (no top-level `exitCode`), a session claim names its
  `chat`; annotations anchored by `origin`; the session lifecycle `failed`; turn errors are
  durable `ErrorResponsePart`s; a `toolClientExecution` request holds a running tool call;
  `changeset/contentChanged` has no `error`; 1.0.0 chat fields (changesets, movable,
  canvases, background work, change counts) and `blocking` MCP startups are drawn.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from hypothesis import strategies as st

from . import uris
from ._common import Json, iso_timestamps, memo

Version = tuple[int, int, int]
Shaper = Callable[[st.DrawFn, Json], Json]

_ALWAYS: Final[Version] = (99, 0, 0)
_V060: Final[Version] = (0, 6, 0)


# --- generic rewriting ---------------------------------------------------------------------


def _walk(value: Any, fix: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """`value` with `fix` applied to every object, innermost first (copies only what changes)."""
    if isinstance(value, dict):
        items = {k: _walk(v, fix) for k, v in value.items()}
        changed = any(items[k] is not value[k] for k in value)
        return fix(items if changed else value)
    if isinstance(value, list):
        out = [_walk(v, fix) for v in value]
        return out if any(a is not b for a, b in zip(out, value, strict=True)) else value
    return value


def _fix_0_6(d: dict[str, Any]) -> dict[str, Any]:
    """One object in 0.6.0's shape (see the module docstring)."""
    out = d
    if "workingDirectories" in out:
        out = {k: v for k, v in out.items() if k != "workingDirectories"}
    origin = out.get("origin")
    if isinstance(origin, dict) and "chat" in origin:  # a chat origin richer than `user`
        out = {k: v for k, v in out.items() if k != "origin"}
    if isinstance(out.get("toolInput"), dict | list):
        out = {**out, "toolInput": json.dumps(out["toolInput"], sort_keys=True)}
    for side in ("before", "after"):
        edit = out.get(side)
        if isinstance(edit, dict) and isinstance(edit.get("content"), dict) and "uri" in edit["content"]:
            out = {**out, side: {**edit, "content": edit["content"]["uri"]}}
    for key in ("inputSchema", "outputSchema"):
        sch = out.get(key)
        if isinstance(sch, dict) and set(sch) - {"type"}:
            out = {**out, key: {"type": sch.get("type", "object")}}
    for key in ("excludes", "includes", "changes", "edits"):
        wrapped = out.get(key)
        if isinstance(wrapped, dict) and isinstance(wrapped.get("items"), list):
            out = {**out, key: {**wrapped, "items": json.dumps(wrapped["items"], sort_keys=True)}}
    attachments = out.get("attachments")
    if isinstance(attachments, list) and any(isinstance(a, dict) and a.get("type") == "chat" for a in attachments):
        out = {**out, "attachments": [a for a in attachments if not (isinstance(a, dict) and a.get("type") == "chat")]}
    return out


def _to_0_6(draw: st.DrawFn, value: Json) -> Json:
    return _walk(value, _fix_0_6)  # type: ignore[no-any-return]


# --- 0.9.0 / 1.0.0 -------------------------------------------------------------------------


def _claim(draw: st.DrawFn, claim: Any) -> Any:
    if isinstance(claim, dict) and claim.get("kind") == "session" and "chat" not in claim:
        return {**claim, "chat": draw(uris.chat_uris())}
    return claim


def _terminal_like(draw: st.DrawFn, t: Json) -> Json:
    """`exitCode` → `lifecycle {status: exited, exitCode}`; otherwise mostly running."""
    out = {k: v for k, v in t.items() if k != "exitCode"}
    if "exitCode" in t:
        out["lifecycle"] = {"status": "exited", "exitCode": t["exitCode"]}
    elif not isinstance(t.get("lifecycle"), dict):
        out["lifecycle"] = draw(st.sampled_from(({"status": "running"}, {"status": "running"}, {"status": "exited"})))
    if "claim" in out:
        out["claim"] = _claim(draw, out["claim"])
    return out


def _terminal_state(draw: st.DrawFn, s: Json) -> Json:
    return _terminal_like(draw, s)


def _root_state(draw: st.DrawFn, s: Json) -> Json:
    terms = s.get("terminals")
    if not isinstance(terms, list):
        return s
    return {**s, "terminals": [_terminal_like(draw, t) if isinstance(t, dict) else t for t in terms]}


def _origin(draw: st.DrawFn, turn_id: Any) -> Json:
    origin: Json = {"session": draw(uris.session_uris())}
    if draw(st.booleans()):
        origin["chat"] = draw(uris.chat_uris())
    if isinstance(turn_id, str):
        origin["turnId"] = turn_id
    return origin


def _annotation(draw: st.DrawFn, a: Any) -> Any:
    if not isinstance(a, dict) or "origin" in a:
        return a
    out = {k: v for k, v in a.items() if k != "turnId"}
    out["origin"] = _origin(draw, a.get("turnId"))
    return out


def _annotations_state(draw: st.DrawFn, s: Json) -> Json:
    items = s.get("annotations")
    return {**s, "annotations": [_annotation(draw, a) for a in items]} if isinstance(items, list) else s


def _durable_turn(draw: st.DrawFn, turn: Any) -> Any:
    """A turn with `error` (0.8.0) → its error as a final `ErrorResponsePart`."""
    if not isinstance(turn, dict) or "error" not in turn:
        return turn
    part: Json = {"kind": "error", "error": turn["error"]}
    if "startedAt" in turn and draw(st.booleans()):  # reopening needs the turn's start (ActiveTurn)
        part["resumable"] = draw(st.booleans())
    out = {k: v for k, v in turn.items() if k != "error"}
    out["responseParts"] = [*(turn.get("responseParts") or []), part]
    return out


@memo
def chat_fields_1_0() -> st.SearchStrategy[Json]:
    """The optional chat fields 1.0.0 added (drawn so that their removals have something to do)."""
    from .actions.chat_flags import work_items
    from .channels import CANVAS_URIS
    from .states import changesets

    return st.fixed_dictionaries(
        {},
        optional={
            "changesets": st.lists(changesets(), min_size=1, max_size=2),
            "movable": st.booleans(),
            "canvases": st.lists(st.fixed_dictionaries({"resource": st.sampled_from(CANVAS_URIS)}), min_size=1, max_size=2),
            "backgroundWork": st.lists(
                work_items(st.sampled_from(("shell-1", "subagent-1", "future-1"))), min_size=1, max_size=3,
                unique_by=lambda w: w["id"],
            ),
            "changes": st.fixed_dictionaries(
                {"additions": st.integers(0, 500), "deletions": st.integers(0, 500), "files": st.integers(0, 20)}
            ).map(lambda c: c if c["files"] else {**c, "additions": 0, "deletions": 0}),  # INV-X09
        },
    )


def _durable_chat(draw: st.DrawFn, s: Json) -> Json:
    """Turn errors as parts; now and then (no active turn) the last turn ended in a resumable
    error, so that `chat/turnResume` has a turn to reopen (status Error, flags kept)."""
    turns = s.get("turns")
    out = {**s, "turns": [_durable_turn(draw, t) for t in turns]} if isinstance(turns, list) else dict(s)
    if out.get("turns") and "activeTurn" not in out and draw(st.booleans()):
        last = out["turns"][-1]
        part = {"kind": "error", "error": {"errorType": "rateLimit", "message": "try again"}, "resumable": True}
        ended = {"startedAt": draw(iso_timestamps()), **last, "state": "error",
                 "responseParts": [*(last.get("responseParts") or []), part]}
        out["turns"] = [*out["turns"][:-1], ended]
        status = out.get("status")
        if isinstance(status, int):
            out["status"] = (status & ~31) | 2
    return out


def _chat_state(draw: st.DrawFn, s: Json) -> Json:
    out = _durable_chat(draw, s)
    out.update(draw(chat_fields_1_0()))
    return out


def _running_call(req: Any) -> bool:
    return not (
        isinstance(req, dict) and req.get("kind") == "toolClientExecution"
        and (req.get("toolCall") or {}).get("status") != "running"
    )


def _blocking(draw: st.DrawFn, entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    state = entry.get("state")
    if entry.get("type") == "mcpServer" and isinstance(state, dict) and state.get("kind") == "starting":
        return {**entry, "state": {**state, "blocking": draw(st.sampled_from((True, True, True, False)))}}
    children = entry.get("children")
    if isinstance(children, list):
        return {**entry, "children": [_blocking(draw, c) for c in children]}
    return entry


def _session_state(draw: st.DrawFn, s: Json) -> Json:
    out = dict(s)
    if out.get("lifecycle") == "creationFailed":
        out["lifecycle"] = "failed"
    needed = out.get("inputNeeded")
    if isinstance(needed, list):
        kept = [r for r in needed if _running_call(r)]
        if kept:
            out["inputNeeded"] = kept
        else:
            del out["inputNeeded"]
    return out


def _session_state_1_0(draw: st.DrawFn, s: Json) -> Json:
    """1.0.0: `McpServerStartingState.blocking`, and now and then a startup that blocks."""
    out = dict(s)
    items = out.get("customizations")
    if isinstance(items, list):
        out["customizations"] = [_blocking(draw, c) for c in items]
    if draw(st.integers(0, 2)) == 0 and not any(
        isinstance(c, dict) and c.get("id") == _SLOW_SERVER["id"] for c in out.get("customizations") or []
    ):  # a startup that holds messages back, for session/mcpServerBackgroundRequested
        out["customizations"] = [*(out.get("customizations") or []), _SLOW_SERVER]
    return out


_SLOW_SERVER: Final[Json] = {
    "type": "mcpServer", "id": "mcp-slow", "name": "Slow server", "uri": "file:///workspace/.vscode/mcp.json",
    "state": {"kind": "starting", "blocking": True},
}


def _state_shaper(fn: Callable[[st.DrawFn, Json], Json]) -> Shaper:
    return fn


# --- actions of 0.9.0 / 1.0.0 --------------------------------------------------------------


def _field(key: str, fn: Callable[[st.DrawFn, Any], Any]) -> Shaper:
    def shape(draw: st.DrawFn, a: Json) -> Json:
        return {**a, key: fn(draw, a[key])} if key in a else a

    return shape


def _list_field(key: str, fn: Callable[[st.DrawFn, Any], Any]) -> Shaper:
    def shape(draw: st.DrawFn, a: Json) -> Json:
        v = a.get(key)
        return {**a, key: [fn(draw, x) for x in v]} if isinstance(v, list) else a

    return shape


def _annotation_updated(draw: st.DrawFn, a: Json) -> Json:
    if "turnId" not in a:
        return a
    out = {k: v for k, v in a.items() if k != "turnId"}
    out["origin"] = _origin(draw, a["turnId"])
    return out


def _without(key: str) -> Shaper:
    return lambda draw, a: {k: v for k, v in a.items() if k != key}


def _input_needed_set(draw: st.DrawFn, a: Json) -> Json:
    req = a.get("request")
    if _running_call(req):
        return a
    call = {"invocationMessage": "Running…", **req["toolCall"], "status": "running", "confirmed": "not-needed"}
    return {**a, "request": {**req, "toolCall": call}}


def _mcp_state(draw: st.DrawFn, a: Json) -> Json:
    state = a.get("state")
    if isinstance(state, dict) and state.get("kind") == "starting":
        return {**a, "state": {**state, "blocking": draw(st.booleans())}}
    return a


#: (from, before, kind, shaper): the state shapes of other versions than 0.7.0.
STATE_SHAPES: Final[tuple[tuple[Version, Version, str, Shaper], ...]] = (
    *(((0, 0, 0), (0, 7, 0), k, _to_0_6) for k in ("root", "session", "chat", "changeset", "resourceWatch", "terminal", "annotations")),
    ((0, 9, 0), _ALWAYS, "terminal", _terminal_state),
    ((0, 9, 0), _ALWAYS, "root", _root_state),
    ((0, 9, 0), _ALWAYS, "annotations", _annotations_state),
    ((0, 9, 0), _ALWAYS, "session", _session_state),
    ((1, 0, 0), _ALWAYS, "session", _session_state_1_0),
    ((0, 9, 0), (1, 0, 0), "chat", _durable_chat),
    ((1, 0, 0), _ALWAYS, "chat", _chat_state),
)

#: (from, before, action type ("*": every type), shaper): the action shapes of other versions.
ACTION_SHAPES: Final[tuple[tuple[Version, Version, str, Shaper], ...]] = (
    ((0, 0, 0), (0, 7, 0), "*", _to_0_6),
    ((0, 0, 0), (0, 7, 0), "chat/toolCallDelta", lambda draw, a: a if "content" in a else {**a, "content": draw(st.sampled_from(("", "…", "ls")))}),
    ((0, 9, 0), _ALWAYS, "annotations/set", _field("annotation", _annotation)),
    ((0, 9, 0), _ALWAYS, "annotations/updated", _annotation_updated),
    ((0, 9, 0), _ALWAYS, "root/terminalsChanged", _list_field("terminals", _terminal_like)),
    ((0, 9, 0), _ALWAYS, "terminal/claimed", _field("claim", _claim)),
    ((0, 9, 0), _ALWAYS, "changeset/contentChanged", _without("error")),
    ((0, 9, 0), _ALWAYS, "chat/turnsLoaded", _list_field("turns", _durable_turn)),
    ((0, 9, 0), _ALWAYS, "session/inputNeededSet", _input_needed_set),
    ((1, 0, 0), _ALWAYS, "session/mcpServerStateChanged", _mcp_state),
    ((1, 0, 0), _ALWAYS, "session/customizationsChanged", _list_field("customizations", _blocking)),
)


def state_shapers(kind: str, version: Version) -> tuple[Shaper, ...]:
    return tuple(f for lo, hi, k, f in STATE_SHAPES if k == kind and lo <= version < hi)


def action_shapers(action_type: str, version: Version) -> tuple[Shaper, ...]:
    return tuple(f for lo, hi, t, f in ACTION_SHAPES if t in (action_type, "*") and lo <= version < hi)


def shaped(strategy: st.SearchStrategy[Json], shapers: tuple[Shaper, ...]) -> st.SearchStrategy[Json]:
    """`strategy` with each drawn value rewritten by `shapers` in turn."""
    if not shapers:
        return strategy

    @st.composite
    def build(draw: st.DrawFn) -> Json:
        value = draw(strategy)
        for f in shapers:
            value = f(draw, value)
        return value

    return build()


def states(kind: str, version: Version) -> st.SearchStrategy[Json]:
    """Valid initial states of `kind` in protocol `version`'s shapes."""
    from .states import states as base

    return shaped(base(kind), state_shapers(kind, version))


def iso_now() -> st.SearchStrategy[str]:
    return iso_timestamps()
