"""Session channel reducer (`ahp-session:/<id>`, REDUCERS.md §4, §8.3, §8.5)."""

from __future__ import annotations

from typing import Any

from . import status as st
from . import working_directories as wd
from .config import config_changed
from .customizations import HANDLERS as CUSTOMIZATION_HANDLERS
from .customizations import RULE_HANDLERS as CUSTOMIZATION_RULE_HANDLERS
from .keyed import field_handler, remove_first, update_first, upsert, without
from .profile import Action, Ctx, Handler, RuleHandlers, State, merge_rule_handlers


def _flag(flag: int, source: str) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        return {**state, "status": st.set_flag(state["status"], flag, bool(action[source]))}

    handler.__name__ = f"flag_{source}"
    return handler


def ready(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, "lifecycle": "ready"}


def _creation_failed(lifecycle: str) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        return {**state, "lifecycle": lifecycle, "creationError": action["error"]}

    handler.__name__ = f"creation_failed_{lifecycle}"
    return handler


#: Up to 0.8.0 the lifecycle is `creationFailed`; 0.9.0 renamed it `failed` (the action kept its name).
creation_failed = _creation_failed("creationFailed")


# -- chat catalog --------------------------------------------------------------------------


def chat_added(state: State, action: Action, ctx: Ctx) -> State:
    """Upsert by `summary.resource`: an existing entry is replaced wholesale, in place."""
    return {**state, "chats": upsert(state.get("chats", []), "resource", action["summary"])}


def chat_removed(state: State, action: Action, ctx: Ctx) -> State:
    chats = state.get("chats", [])
    uri = action["chat"]
    remaining = remove_first(chats, "resource", uri)
    if remaining is chats:
        return state
    result = {**state, "chats": remaining}
    if result.get("defaultChat") == uri:
        del result["defaultChat"]
    return result


def chat_updated(state: State, action: Action, ctx: Ctx) -> State:
    """Shallow-merge `changes` (minus `resource`) into the matching entry; None values clear keys."""
    chats = state.get("chats", [])
    changes = without(dict(action["changes"]), "resource")

    def merge(entry: dict[str, Any]) -> dict[str, Any]:
        merged = {**entry, **changes}
        return {k: v for k, v in merged.items() if v is not None}

    updated = update_first(chats, "resource", action["chat"], merge)
    return state if updated is chats else {**state, "chats": updated}


def chats_reordered(state: State, action: Action, ctx: Ctx) -> State:
    """1.0.0 `session/chatsReordered {chats}`: the host's complete, authoritative catalogue
    order. Applied only when `chats` names every catalogue entry exactly once (no unknown URI,
    no duplicate, none missing); otherwise a no-op. Summaries are kept as they are, only
    their order changes (fixtures 277–285-session)."""
    chats = state.get("chats") or []
    order = action["chats"]
    by_uri = {c.get("resource"): c for c in chats if isinstance(c, dict)}
    if len(order) != len(chats) or len(by_uri) != len(chats) or set(order) != set(by_uri):
        return state
    reordered = [by_uri[u] for u in order]
    if all(a is b for a, b in zip(reordered, chats, strict=True)):
        return state
    return {**state, "chats": reordered}


# -- clients and input-needed queue ---------------------------------------------------------


def active_client_set(state: State, action: Action, ctx: Ctx) -> State:
    clients = state.get("activeClients", [])
    return {**state, "activeClients": upsert(clients, "clientId", action["activeClient"])}


def active_client_removed(state: State, action: Action, ctx: Ctx) -> State:
    clients = state.get("activeClients", [])
    remaining = remove_first(clients, "clientId", action["clientId"])
    return state if remaining is clients else {**state, "activeClients": remaining}


def _input_needed_status(status: int, entries: list[Any], ctx: Ctx) -> int:
    """§4.1 (+ §7b row 10): a counting entry ⇒ activity InputNeeded; none ⇒ clear bit 4 only."""
    if ctx.profile.client_execution_blocks:
        counting = bool(entries)
    else:
        counting = any(e.get("kind") != "toolClientExecution" for e in entries)
    if counting:
        return st.with_activity(status, st.INPUT_NEEDED)
    return st.bits(status) & ~st.INPUT_BIT


def input_needed_set(state: State, action: Action, ctx: Ctx) -> State:
    entries = upsert(state.get("inputNeeded", []), "id", action["request"])
    return {**state, "inputNeeded": entries, "status": _input_needed_status(state["status"], entries, ctx)}


def input_needed_removed(state: State, action: Action, ctx: Ctx) -> State:
    entries = state.get("inputNeeded")
    if entries is None:
        return state
    remaining = remove_first(entries, "id", action["id"])
    if remaining is entries:
        return state
    result = {**state, "status": _input_needed_status(state["status"], list(remaining), ctx)}
    if remaining:
        result["inputNeeded"] = remaining
    else:
        del result["inputNeeded"]
    return result


HANDLERS: dict[str, Handler] = {
    "session/ready": ready,
    "session/creationFailed": creation_failed,
    "session/chatAdded": chat_added,
    "session/chatRemoved": chat_removed,
    "session/chatUpdated": chat_updated,
    "session/defaultChatChanged": field_handler("defaultChat", clear_if_absent=True),
    "session/titleChanged": field_handler("title"),
    "session/isReadChanged": _flag(st.IS_READ, "isRead"),
    "session/isArchivedChanged": _flag(st.IS_ARCHIVED, "isArchived"),
    "session/activityChanged": field_handler("activity", clear_if_absent=True),
    "session/changesetsChanged": field_handler("changesets", clear_if_absent=True),
    "session/configChanged": config_changed,
    "session/metaChanged": field_handler("_meta", clear_if_absent=True),
    "session/serverToolsChanged": field_handler("serverTools", "tools"),
    "session/activeClientSet": active_client_set,
    "session/activeClientRemoved": active_client_removed,
    "session/inputNeededSet": input_needed_set,
    "session/inputNeededRemoved": input_needed_removed,
    "session/workingDirectorySet": wd.directory_set,
    "session/workingDirectoryRemoved": wd.directory_removed,
    "session/workingDirectoryReplaced": wd.directory_replaced,
    "session/chatsReordered": chats_reordered,
    **CUSTOMIZATION_HANDLERS,
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: RuleHandlers = merge_rule_handlers(
    {("failed_lifecycle", True): {"session/creationFailed": _creation_failed("failed")}},
    CUSTOMIZATION_RULE_HANDLERS,
)
