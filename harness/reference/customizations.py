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


def customization_toggled(state: State, action: Action, ctx: Ctx) -> State:
    """Top-level match first; else the first container holding a child with that id."""
    items = state.get(KEY)
    if items is None:
        return state
    cid, enabled = action["id"], action["enabled"]
    i = index_of(items, "id", cid)
    if i >= 0:
        return {**state, KEY: [*items[:i], {**items[i], "enabled": enabled}, *items[i + 1 :]]}
    for ci, container in enumerate(items):
        if not _is_container(container):
            continue
        children = container["children"]
        j = index_of(children, "id", cid)
        if j >= 0:
            new_children = [*children[:j], {**children[j], "enabled": enabled}, *children[j + 1 :]]
            new_container = {**container, "children": new_children}
            return {**state, KEY: [*items[:ci], new_container, *items[ci + 1 :]]}
    return state


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
        return [*items[:i], change(items[i]), *items[i + 1 :]]
    changed = False
    result: list[Any] = []
    for entry in items:
        if _is_container(entry):
            children = entry["children"]
            j = index_of(children, "id", sid)
            if j >= 0 and children[j].get("type") == "mcpServer":
                new_children = [*children[:j], change(children[j]), *children[j + 1 :]]
                entry = {**entry, "children": new_children}
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


HANDLERS: dict[str, Handler] = {
    "session/customizationsChanged": customizations_changed,
    "session/customizationToggled": customization_toggled,
    "session/customizationUpdated": customization_updated,
    "session/customizationRemoved": customization_removed,
    "session/mcpServerStateChanged": _mcp_handler(_state_changed),
    "session/mcpServerStartRequested": _mcp_handler(_requested("starting")),
    "session/mcpServerStopRequested": _mcp_handler(_requested("stopped")),
}
