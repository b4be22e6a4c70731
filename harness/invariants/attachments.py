"""F. Collection attachments, draft proposal seed 000 (INVARIANTS.md INV-036…040; REDUCERS.md §9).

Reducers store messages verbatim, so the reducer-checkable parts are: a stored message flattens
to the same model-facing list as the dispatched one (INV-036), and its collection and member
metadata are kept exactly, unmerged (INV-038). Flattening is the model's pure function
`harness.reference.collections.flatten_attachments`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from ._json import as_list, hkey, short
from .base import Step, catalogue_entry, invariant

_MESSAGE_ACTIONS: Final = frozenset(
    {
        "chat/turnStarted",
        "chat/pendingMessageSet",
        "chat/draftChanged",
        "chat/turnsLoaded",
        "chat/toolCallConfirmed",
    }
)
_COLLECTION_META: Final = ("label", "displayKind", "range", "_meta")
_MEMBER_META: Final = ("range", "_meta")


def _exact(value: Any) -> str:
    """Byte-for-byte identity of a JSON value (key presence and JSON types count)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _has_collection(message: Any) -> bool:
    atts = message.get("attachments") if isinstance(message, dict) else None
    return isinstance(atts, list) and any(
        isinstance(a, dict) and a.get("type") == "collection" for a in atts
    )


def _tool_suggestions(turn: Any, tool_call_id: Any) -> Iterator[Any]:
    parts = turn.get("responseParts") if isinstance(turn, dict) else None
    for part in parts if isinstance(parts, list) else []:
        tc = (
            part.get("toolCall")
            if isinstance(part, dict) and part.get("kind") == "toolCall"
            else None
        )
        if isinstance(tc, dict) and tc.get("toolCallId") == tool_call_id and "userSuggestion" in tc:
            yield tc.get("userSuggestion")


def stored_messages(step: Step) -> Iterator[tuple[str, Any, Any]]:
    """`(where, dispatched message, stored message)` for each message a step stores, limited to
    messages that carry a collection attachment."""
    a, after, t = step.action, step.after, step.type
    if t == "chat/turnStarted":
        msg = a.get("message")
        if _has_collection(msg):
            turn = after.get("activeTurn")
            yield "activeTurn.message", msg, turn.get("message") if isinstance(turn, dict) else None
    elif t == "chat/pendingMessageSet":
        msg = a.get("message")
        if _has_collection(msg):
            if a.get("kind") == "steering":
                sm = after.get("steeringMessage")
                yield (
                    "steeringMessage.message",
                    msg,
                    sm.get("message") if isinstance(sm, dict) else None,
                )
            else:
                queue = as_list(after.get("queuedMessages"))
                found = [
                    m.get("message")
                    for m in queue
                    if isinstance(m, dict) and m.get("id") == a.get("id")
                ]
                yield f"queuedMessages[id={a.get('id')}].message", msg, found[0] if found else None
    elif t == "chat/draftChanged":
        msg = a.get("draft")
        if _has_collection(msg):
            yield "draft", msg, after.get("draft")
    elif t == "chat/turnsLoaded":
        present = {
            hkey(x.get("id")) for x in as_list(step.before.get("turns")) if isinstance(x, dict)
        }
        stored = {
            hkey(x.get("id")): x
            for x in reversed(as_list(after.get("turns")))
            if isinstance(x, dict)
        }
        for turn in as_list(a.get("turns")):
            if not isinstance(turn, dict) or hkey(turn.get("id")) in present:
                continue
            msg = turn.get("message")
            if _has_collection(msg):
                got = stored.get(hkey(turn.get("id")))
                yield (
                    f"turns[id={turn.get('id')}].message",
                    msg,
                    got.get("message") if got else None,
                )
    elif t == "chat/toolCallConfirmed" and a.get("approved") is False:
        msg = a.get("userSuggestion")
        if _has_collection(msg):
            for got in _tool_suggestions(after.get("activeTurn"), a.get("toolCallId")):
                yield f"toolCall {a.get('toolCallId')}.userSuggestion", msg, got


def _strip(att: Any) -> Any:
    return {k: v for k, v in att.items() if k not in _MEMBER_META} if isinstance(att, dict) else att


@invariant(
    "INV-036",
    "Flattening preserves order",
    severity="violation",
    source='collection proposal (seed 000) §Model context ("hosts MUST process each member in '
    'order exactly as if it appeared directly in Message.attachments"), §Ordering ("Member '
    'order is significant and MUST be preserved")',
    kinds={"chat"},
    actions=_MESSAGE_ACTIONS,
    note="Reducer part: the stored message flattens to the dispatched one. The host's model "
    "context capture is live (later issue).",
)
def flatten_preserved(step: Step) -> Iterator[str]:
    """The model-facing attachment list — the concatenation, in message order, of each
    collection's members (in member order) or the attachment itself — is the same for the stored
    message as for the dispatched one."""
    from harness.reference.collections import flatten_attachments

    for where, sent, stored in stored_messages(step):
        if not isinstance(stored, dict):
            yield f"{step.type}: {where} was not stored"
            continue
        want = [_exact(_strip(x)) for x in flatten_attachments(as_list(sent.get("attachments")))]
        got = [_exact(_strip(x)) for x in flatten_attachments(as_list(stored.get("attachments")))]
        if want != got:
            yield f"{step.type}: {where} flattens to {len(got)} member(s) in a different order or content than the {len(want)} sent"


INV_037 = catalogue_entry(
    "INV-037",
    "Collections are one level deep and non-empty",
    severity="violation",
    scope="wire",
    kinds={"chat"},
    source='collection proposal (seed 000): member union excludes collections; "This array MUST '
    'contain at least one attachment"',
    statement="A collection never contains a collection and never has zero members; such a "
    "message is rejected (not silently flattened twice or dropped).",
    note="Needs a live host (later issue): dispatch a nested and an empty collection, expect a "
    "rejection echo and no state change.",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)


@invariant(
    "INV-038",
    "Collection and member metadata stay independent",
    severity="violation",
    source='collection proposal (seed 000) §Metadata ("Hosts MUST preserve both without merging")',
    kinds={"chat"},
    actions=_MESSAGE_ACTIONS,
    note="Reducer part (stored messages); durable storage through a host is live (later issue).",
)
def metadata_independent(step: Step) -> Iterator[str]:
    """In durable state, a collection's `_meta`, `label`, `displayKind` and `range` and each
    member's `_meta` and `range` are byte-for-byte what the producer sent; no key of one appears
    in the other."""
    for where, sent, stored in stored_messages(step):
        if not isinstance(stored, dict):
            continue
        got_atts = as_list(stored.get("attachments"))
        for i, att in enumerate(as_list(sent.get("attachments"))):
            if not (isinstance(att, dict) and att.get("type") == "collection"):
                continue
            got = got_atts[i] if i < len(got_atts) else None
            if not isinstance(got, dict):
                yield f"{step.type}: {where}.attachments[{i}] (a collection) is missing"
                continue
            for key in _COLLECTION_META:
                if _exact(att.get(key)) != _exact(got.get(key)):
                    yield f"{step.type}: {where}.attachments[{i}].{key} {short(att.get(key))} → {short(got.get(key))}"
            members, got_members = as_list(att.get("attachments")), as_list(got.get("attachments"))
            for j, member in enumerate(members):
                other = got_members[j] if j < len(got_members) else None
                for key in _MEMBER_META:
                    mine = member.get(key) if isinstance(member, dict) else None
                    theirs = other.get(key) if isinstance(other, dict) else None
                    if _exact(mine) != _exact(theirs):
                        yield f"{step.type}: {where}.attachments[{i}].attachments[{j}].{key} {short(mine)} → {short(theirs)}"


INV_039 = catalogue_entry(
    "INV-039",
    "Durable preservation of collections",
    severity="violation",
    scope="live",
    kinds={"chat"},
    source='collection proposal (seed 000) §Durable state; "No reducer changes should be required"',
    statement="On a connection that negotiated collection support, every carrier (snapshot, live "
    "action, replay, turnsLoaded) presents the collection as a single attachment, unchanged.",
    note="Needs a live host (later issue).",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)

INV_040 = catalogue_entry(
    "INV-040",
    "Degradation to older peers",
    severity="violation",
    scope="live",
    kinds={"chat"},
    source="collection proposal (seed 000) §Compatibility (rollout steps 2–4)",
    statement="On a connection without collection support, every message that contains "
    "collections is presented with attachments = flatten(attachments); no member is lost, order "
    "is preserved, and no collection variant is sent.",
    note="Needs a live host with two clients of different versions (later issue).",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)
