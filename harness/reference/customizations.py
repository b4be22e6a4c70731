"""Session customizations and MCP servers (REDUCERS.md §4.2: customization* and mcpServer*).

A *container* is a top-level entry that is not an `mcpServer` and has `children`. Lookups by id
search the top level first, then containers' children.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .keyed import index_of, remove_first, set_or_clear, upsert
from .profile import Action, Ctx, Handler, State

KEY = "customizations"
Entry = dict[str, Any]


def _is_container(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("type") != "mcpServer" and "children" in entry


def customizations_changed(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, KEY: action["customizations"]}


def _toggle(change: Callable[[Entry, Action], Entry]) -> Handler:
    """Top-level match first; else the first container holding a child with that id."""

    def handler(state: State, action: Action, ctx: Ctx) -> State:
        items = state.get(KEY)
        if items is None:
            return state
        cid = action["id"]
        i = index_of(items, "id", cid)
        if i >= 0:
            return {**state, KEY: [*items[:i], change(items[i], action), *items[i + 1 :]]}
        for ci, container in enumerate(items):
            if not _is_container(container):
                continue
            children = container["children"]
            j = index_of(children, "id", cid)
            if j >= 0:
                new_children = [*children[:j], change(children[j], action), *children[j + 1 :]]
                new_container = {**container, "children": new_children}
                return {**state, KEY: [*items[:ci], new_container, *items[ci + 1 :]]}
        return state

    return handler


#: Up to 0.7.0: `{id, enabled}` sets the entry's `enabled`.
customization_toggled = _toggle(lambda e, a: {**e, "enabled": a["enabled"]})
#: 0.8.0 on: `{id, enablement[]}` replaces the whole decision set; `[]` restores the default
#: (the key is removed — fixture 263-session-customizationtoggled-clears-enablement).
customization_enablement_set = _toggle(
    lambda e, a: set_or_clear(e, "enablement", a["enablement"] or None)
)


def customization_updated(state: State, action: Action, ctx: Ctx) -> State:
    entry = action["customization"]
    return {**state, KEY: upsert(state.get(KEY, []), "id", entry)}


def customization_removed(state: State, action: Action, ctx: Ctx) -> State:
    """Top-level match removed (with its children); else the first matching child of EVERY container."""
    items = state.get(KEY)
    if items is None:
        return state
    cid = action["id"]
    top = remove_first(items, "id", cid)
    if top is not items:
        return {**state, KEY: top}
    changed = False
    result: list[Any] = []
    for entry in items:
        if _is_container(entry):
            children = remove_first(entry["children"], "id", cid)
            if children is not entry["children"]:
                entry = {**entry, "children": children}
                changed = True
        result.append(entry)
    return {**state, KEY: result} if changed else state


def _update_mcp(items: list[Any], sid: Any, change: Callable[[Entry], Entry]) -> list[Any] | None:
    """Apply `change` to the MCP server(s) with id `sid` (the "MCP lookup"); None if none updated.

    A top-level entry with the id wins: it is updated only if it is an mcpServer. Otherwise the
    first child with the id in every container is updated when it is an mcpServer.
    """
    i = index_of(items, "id", sid)
    if i >= 0:
        if items[i].get("type") != "mcpServer":
            return None
        new = change(items[i])
        return None if new is items[i] else [*items[:i], new, *items[i + 1 :]]
    changed = False
    result: list[Any] = []
    for entry in items:
        if _is_container(entry):
            children = entry["children"]
            j = index_of(children, "id", sid)
            if j >= 0 and children[j].get("type") == "mcpServer":
                new = change(children[j])
                if new is not children[j]:
                    entry = {**entry, "children": [*children[:j], new, *children[j + 1 :]]}
                    changed = True
        result.append(entry)
    return result if changed else None


def _mcp_handler(make: Callable[[Action], Callable[[Entry], Entry]]) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        items = state.get(KEY)
        if items is None:
            return state
        updated = _update_mcp(items, action["id"], make(action))
        return state if updated is None else {**state, KEY: updated}

    return handler


def _state_changed(action: Action) -> Callable[[Entry], Entry]:
    return lambda e: set_or_clear({**e, "state": action["state"]}, "channel", action.get("channel"))


def _requested(kind: str) -> Callable[[Action], Callable[[Entry], Entry]]:
    def make(action: Action) -> Callable[[Entry], Entry]:
        return lambda e: set_or_clear({**e, "state": {"kind": kind}}, "channel", None)

    return make


def _backgrounded(action: Action) -> Callable[[Entry], Entry]:
    """1.0.0 `session/mcpServerBackgroundRequested`: `blocking := false`, only for a server
    that is starting and blocking; any other server is left as it is."""

    def change(e: Entry) -> Entry:
        st = e.get("state")
        if isinstance(st, dict) and st.get("kind") == "starting" and st.get("blocking") is True:
            return {**e, "state": {**st, "blocking": False}}
        return e

    return change


HANDLERS: dict[str, Handler] = {
    "session/customizationsChanged": customizations_changed,
    "session/customizationToggled": customization_toggled,
    "session/customizationUpdated": customization_updated,
    "session/customizationRemoved": customization_removed,
    "session/mcpServerStateChanged": _mcp_handler(_state_changed),
    "session/mcpServerStartRequested": _mcp_handler(_requested("starting")),
    "session/mcpServerStopRequested": _mcp_handler(_requested("stopped")),
    "session/mcpServerBackgroundRequested": _mcp_handler(_backgrounded),
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: dict[tuple[str, bool], dict[str, Handler]] = {
    ("customization_enablement", True): {"session/customizationToggled": customization_enablement_set},
}
