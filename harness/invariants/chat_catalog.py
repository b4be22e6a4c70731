"""D. The session's chat catalog, keyed collections and idempotence (INVARIANTS.md INV-025…028)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from ._json import as_list, describe_diffs, fresh, hkey, same, same_except, short
from .base import ALL_KINDS, Reducer, Step, catalogue_entry, invariant


def _resources(chats: Any) -> list[Any]:
    if not isinstance(chats, list):
        return []
    return [c.get("resource") if isinstance(c, dict) else None for c in chats]


@invariant(
    "INV-025",
    "Chat catalog keyed by resource",
    severity="violation",
    source="specification/session-channel.md §Chat catalog mutations; fixtures 170–175",
    kinds={"session"},
)
def chat_catalog(step: Step) -> Iterator[str]:
    """`chats` has pairwise distinct `resource` values (given a distinct start);
    `session/chatUpdated` never changes an entry's `resource`; after `session/chatRemoved(c)` of
    a catalogued chat, `defaultChat ≠ c`."""
    b_chats, a_chats = step.before.get("chats"), step.after.get("chats")
    if a_chats is b_chats and step.type != "session/chatRemoved":
        return
    before, after = _resources(b_chats), _resources(a_chats)
    if len(set(map(hkey, before))) == len(before) and len(set(map(hkey, after))) != len(after):
        yield f"{step.type}: chat resources are no longer distinct: {after}"
    if step.type == "session/chatUpdated" and before != after:
        yield f"session/chatUpdated changed catalog resources {before} → {after}"
    if step.type == "session/chatRemoved":
        chat = step.action.get("chat")
        if chat in before and step.after.get("defaultChat") == chat:
            yield f"session/chatRemoved({chat}) left defaultChat naming the removed chat"


INV_026 = catalogue_entry(
    "INV-026",
    "defaultChat names a catalog entry",
    severity="violation",
    scope="live",
    kinds={"session"},
    source='specification/session-channel.md §Server Validation ("Server MUST reject"); R§11 item 3',
    statement="If `defaultChat` is present it equals some `chats[i].resource`.",
    note="Needs a live host (later issue): the reducer accepts any URI; a host must reject "
    "`session/defaultChatChanged` naming an unknown chat (or reject it as server-only).",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)

#: kind -> (collection path, key) pairs that must stay unique (INV-027).
_KEYED: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "session": (("activeClients", "clientId"), ("inputNeeded", "id"), ("customizations", "id")),
    "changeset": (("files", "id"),),
    "annotations": (("annotations", "id"),),
}


def _duplicates(items: Any, key: str) -> list[Any]:
    if not isinstance(items, list):
        return []
    seen: set[str] = set()
    dups = []
    for item in items:
        k = short(item.get(key)) if isinstance(item, dict) else short(item)
        if k in seen:
            dups.append(item.get(key) if isinstance(item, dict) else item)
        seen.add(k)
    return dups


def _carries_duplicates(payload: Any, key: str) -> bool:
    """Does the action itself hold a list with a repeated `key`? Then the step broke the
    uniqueness precondition (ids are unique by the spec), and a reducer that stores the payload
    as given is not the one to blame."""
    if isinstance(payload, list):
        if _duplicates([x for x in payload if isinstance(x, dict) and key in x], key):
            return True
        return any(_carries_duplicates(x, key) for x in payload)
    if isinstance(payload, dict):
        return any(_carries_duplicates(v, key) for v in payload.values())
    return False


@invariant(
    "INV-027",
    "Keyed collections stay unique",
    severity="violation",
    source="upsert semantics of each action doc (activeClientSet, inputNeededSet, "
    "customizationUpdated, fileSet, annotations/set, entrySet); SessionInputRequestBase.id doc "
    '("unique within the session\'s inputNeeded list")',
    kinds=set(_KEYED),
)
def keyed_unique(step: Step) -> Iterator[str]:
    """`activeClients` unique by `clientId`; `inputNeeded` unique by `id`; top-level
    `customizations` unique by `id`; changeset `files` unique by `id`; annotations unique by `id`
    and entries unique within an annotation (given unique starts)."""
    for path, key in _KEYED.get(step.kind, ()):
        b, a = step.before.get(path), step.after.get(path)
        if a is b:
            continue
        dups = _duplicates(a, key)
        if dups and not _duplicates(b, key) and not _carries_duplicates(step.action, key):
            yield f"{step.type}: {path} has duplicate {key} {short(dups)}"
    if step.kind == "annotations":
        b_by_id = {
            hkey(x.get("id")): x
            for x in as_list(step.before.get("annotations"))
            if isinstance(x, dict)
        }
        for ann in as_list(step.after.get("annotations")):
            if not isinstance(ann, dict):
                continue
            old = b_by_id.get(hkey(ann.get("id")))
            if old is ann:
                continue
            dups = _duplicates(ann.get("entries"), "id")
            if _carries_duplicates(step.action, "id"):
                continue
            if dups and not (old is not None and _duplicates(old.get("entries"), "id")):
                yield f"{step.type}: annotation {short(ann.get('id'))} has duplicate entry ids {short(dups)}"


_IDEMPOTENT: Final = frozenset(
    {
        "root/agentsChanged",
        "root/activeSessionsChanged",
        "root/terminalsChanged",
        "root/configChanged",
        "session/ready",
        "session/creationFailed",
        "session/titleChanged",
        "session/serverToolsChanged",
        "session/customizationsChanged",
        "session/activityChanged",
        "session/changesetsChanged",
        "session/metaChanged",
        "session/defaultChatChanged",
        "session/configChanged",
        "session/isReadChanged",
        "session/isArchivedChanged",
        "session/chatAdded",
        "session/chatRemoved",
        "session/chatUpdated",
        "session/activeClientSet",
        "session/activeClientRemoved",
        "session/inputNeededSet",
        "session/inputNeededRemoved",
        "session/customizationToggled",
        "session/customizationUpdated",
        "session/customizationRemoved",
        "session/mcpServerStateChanged",
        "session/mcpServerStartRequested",
        "session/mcpServerStopRequested",
        "session/workingDirectorySet",
        "session/workingDirectoryRemoved",
        "session/workingDirectoryReplaced",
        "chat/pendingMessageSet",
        "chat/pendingMessageRemoved",
        "chat/queuedMessagesReordered",
        "chat/draftChanged",
        "chat/activityChanged",
        "chat/usage",
        "chat/truncated",
        "chat/turnsLoaded",
        "chat/inputAnswerChanged",
        "chat/toolCallContentChanged",
        "chat/workingDirectorySet",
        "chat/workingDirectoryRemoved",
        "changeset/statusChanged",
        "changeset/fileSet",
        "changeset/fileRemoved",
        "changeset/filesReviewChanged",
        "changeset/contentChanged",
        "changeset/operationsChanged",
        "changeset/operationStatusChanged",
        "changeset/cleared",
        "annotations/set",
        "annotations/updated",
        "annotations/removed",
        "annotations/entrySet",
        "annotations/entryRemoved",
        "terminal/resized",
        "terminal/claimed",
        "terminal/titleChanged",
        "terminal/cwdChanged",
        "terminal/exited",
        "terminal/cleared",
        "terminal/commandDetectionAvailable",
        "terminal/commandFinished",
    }
)


def _has_text(key: str) -> Callable[[dict[str, Any]], bool]:
    return lambda action: bool(action.get(key))


#: Doubling these must change the state whenever the first application did (a sanity check).
_NOT_IDEMPOTENT: Final[dict[str, Callable[[dict[str, Any]], bool]]] = {
    "chat/delta": _has_text("content"),
    "chat/reasoning": _has_text("content"),
    "chat/toolCallDelta": _has_text("content"),
    "terminal/data": _has_text("data"),
    "chat/responsePart": lambda _: True,
    "chat/toolCallStart": lambda _: True,
    "terminal/commandExecuted": lambda _: True,
}
_CLOCK: Final = frozenset({"modifiedAt"})


@invariant(
    "INV-028",
    "Idempotent actions",
    severity="violation",
    source="upsert / full-replacement wording in the action docs; multiroot proposal "
    '("idempotent and safe to retry")',
    kinds=ALL_KINDS,
    probe=True,
    actions=_IDEMPOTENT | set(_NOT_IDEMPOTENT),
    note="The appending actions (delta, reasoning, toolCallDelta, responsePart, toolCallStart, "
    "terminal data/commandExecuted) are checked the other way: doubling must change the state.",
)
def idempotent(step: Step, reducer: Reducer) -> Iterator[str]:
    """For full-replacement, upsert, remove, toggle and set-membership actions R(R(s,a),a) ==
    R(s,a) (ignoring `modifiedAt`); for the appending actions with non-empty content, applying
    the action a second time changes the state again."""
    again = reducer(step.kind, fresh(step.after), fresh(step.action), step.now_ms)
    if step.type in _IDEMPOTENT:
        if not same_except(again, step.after, _CLOCK):
            yield f"{step.type} applied twice differs from once: " + describe_diffs(
                step.after, again, left="once", right="twice"
            )
        return
    appends = _NOT_IDEMPOTENT[step.type](step.action)
    if appends and not same(step.before, step.after) and same(again, step.after):
        yield f"{step.type} changed the state once but not when applied again (it must append)"


@invariant(
    "INV-X11",
    "session/chatsReordered applies only a complete authoritative order",
    severity="violation",
    source='SessionChatsReorderedAction ("Every chat URI in authoritative catalog order"); '
    "CHANGELOG 1.0.0 (moveChat, same-session ordering); fixtures 277–285-session",
    kinds={"session"},
    actions={"session/chatsReordered"},
)
def chats_reordered(step: Step) -> Iterator[str]:
    """When `chats` names every catalogue entry exactly once, the catalogue takes exactly that
    order with every summary unchanged; an incomplete order, an unknown URI or a duplicate is a
    no-op (the catalogue is left as it was)."""
    before = [c for c in as_list(step.before.get("chats"))]
    after = as_list(step.after.get("chats"))
    order = step.action.get("chats")
    uris = _resources(before)
    complete = (
        isinstance(order, list) and len(order) == len(uris) == len(set(map(hkey, uris)))
        and sorted(map(hkey, order)) == sorted(map(hkey, uris))
    )
    if not complete:
        if not same(before, after):
            yield f"session/chatsReordered({short(order)}) is not a complete order but changed the catalogue"
        return
    if _resources(after) != order:
        yield f"session/chatsReordered: catalogue order is {_resources(after)}, want {order}"
    by_uri = {hkey(c.get("resource")): c for c in before if isinstance(c, dict)}
    for c in after:
        if isinstance(c, dict) and not same(c, by_uri.get(hkey(c.get("resource")))):
            yield f"session/chatsReordered changed the summary of {c.get('resource')}"
