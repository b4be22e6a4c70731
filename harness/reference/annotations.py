"""Annotations channel reducer (`ahp-session:/<id>/annotations`, REDUCERS.md §6.3)."""

from __future__ import annotations

from typing import Any

from .keyed import remove_first, update_first, upsert
from .profile import Action, Ctx, Handler, State

KEY = "annotations"
_UPDATABLE = ("turnId", "resource", "range", "resolved")


def set_(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, KEY: upsert(state.get(KEY, []), "id", action["annotation"])}


def _updater(updatable: tuple[str, ...]) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        """Overwrite only the fields present in the action; entries, id and _meta are never touched."""
        fields = {k: action[k] for k in updatable if action.get(k) is not None}
        items = state.get(KEY, [])
        result = update_first(items, "id", action["annotationId"], lambda a: {**a, **fields})
        return state if result is items else {**state, KEY: result}

    return handler


updated = _updater(_UPDATABLE)
#: 0.9.0: an annotation is anchored by `origin {session, chat?, turnId?}`, not `turnId`.
updated_origin = _updater(("origin", "resource", "range", "resolved"))


def removed(state: State, action: Action, ctx: Ctx) -> State:
    items = state.get(KEY, [])
    result = remove_first(items, "id", action["annotationId"])
    return state if result is items else {**state, KEY: result}


def _on_entries(state: State, annotation_id: Any, change: Any) -> State:
    items = state.get(KEY, [])
    changed = False

    def apply(annotation: dict[str, Any]) -> dict[str, Any]:
        nonlocal changed
        entries = annotation.get("entries", [])
        new_entries = change(entries)
        if new_entries is entries:
            return annotation
        changed = True
        return {**annotation, "entries": new_entries}

    result = update_first(items, "id", annotation_id, apply)
    return {**state, KEY: result} if changed else state


def entry_set(state: State, action: Action, ctx: Ctx) -> State:
    entry = action["entry"]
    return _on_entries(state, action["annotationId"], lambda es: upsert(es, "id", entry))


def entry_removed(state: State, action: Action, ctx: Ctx) -> State:
    entry_id = action["entryId"]
    return _on_entries(state, action["annotationId"], lambda es: remove_first(es, "id", entry_id))


HANDLERS: dict[str, Handler] = {
    "annotations/set": set_,
    "annotations/updated": updated,
    "annotations/removed": removed,
    "annotations/entrySet": entry_set,
    "annotations/entryRemoved": entry_removed,
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: dict[tuple[str, bool], dict[str, Handler]] = {
    ("annotation_origin", True): {"annotations/updated": updated_origin},
}
