"""Changeset channel reducer (`ahp-changeset:/<id>`, REDUCERS.md §6.2)."""

from __future__ import annotations

from typing import Any

from .keyed import remove_first, set_or_clear, update_first, upsert, without
from .profile import Action, Ctx, Handler, State


def _with_status(entry: dict[str, Any], action: Action) -> dict[str, Any]:
    """Status `error` stores the payload error; any other status deletes `error`."""
    result = {**entry, "status": action["status"]}
    if action["status"] == "error":
        return set_or_clear(result, "error", action.get("error"))
    return without(result, "error")


def status_changed(state: State, action: Action, ctx: Ctx) -> State:
    return _with_status(state, action)


def file_set(state: State, action: Action, ctx: Ctx) -> State:
    return {**state, "files": upsert(state.get("files", []), "id", action["file"])}


def file_removed(state: State, action: Action, ctx: Ctx) -> State:
    files = state.get("files", [])
    remaining = remove_first(files, "id", action["fileId"])
    return state if remaining is files else {**state, "files": remaining}


def files_review_changed(state: State, action: Action, ctx: Ctx) -> State:
    """Set `reviewed` on each listed file whose value is not already exactly the payload's."""
    ids = set(action["files"])
    reviewed = action["reviewed"]
    changed = False
    result = []
    for f in state.get("files", []):
        if isinstance(f, dict) and f.get("id") in ids and ("reviewed" not in f or f["reviewed"] is not reviewed):
            f = {**f, "reviewed": reviewed}
            changed = True
        result.append(f)
    return {**state, "files": result} if changed else state


def content_changed(state: State, action: Action, ctx: Ctx) -> State:
    """Files replaced; operations only if present; error set or deleted. Status untouched."""
    result = {**state, "files": action["files"]}
    if "operations" in action:
        result["operations"] = action["operations"]
    return set_or_clear(result, "error", action.get("error"))


def content_changed_keeps_error(state: State, action: Action, ctx: Ctx) -> State:
    """0.9.0 removed `error` from the action: files replaced, operations only if present; the
    state's `error` and status are untouched (failures go through `changeset/statusChanged`)."""
    result = {**state, "files": action["files"]}
    if "operations" in action:
        result["operations"] = action["operations"]
    return result


def operations_changed(state: State, action: Action, ctx: Ctx) -> State:
    return set_or_clear(state, "operations", action.get("operations"))


def operation_status_changed(state: State, action: Action, ctx: Ctx) -> State:
    operations = state.get("operations")
    if operations is None:
        return state
    updated = update_first(operations, "id", action["operationId"], lambda op: _with_status(op, action))
    return state if updated is operations else {**state, "operations": updated}


def cleared(state: State, action: Action, ctx: Ctx) -> State:
    if not state.get("files"):
        return state
    return {**state, "files": []}


HANDLERS: dict[str, Handler] = {
    "changeset/statusChanged": status_changed,
    "changeset/fileSet": file_set,
    "changeset/fileRemoved": file_removed,
    "changeset/filesReviewChanged": files_review_changed,
    "changeset/contentChanged": content_changed,
    "changeset/operationsChanged": operations_changed,
    "changeset/operationStatusChanged": operation_status_changed,
    "changeset/cleared": cleared,
}

#: Handlers a `VERSION_RULES` rule puts in place: (rule, value) -> type -> handler.
RULE_HANDLERS: dict[tuple[str, bool], dict[str, Handler]] = {
    ("changeset_content_error", False): {"changeset/contentChanged": content_changed_keeps_error},
}
