"""Collection attachments (draft proposal, seed 000; REDUCERS.md §9).

A `collection` attachment groups member attachments into one logical item. Reducers need no
change (messages are stored verbatim); what the model adds is (1) validation of a collection —
at least one member, members may not be collections — and (2) the one-level, in-order
flattening a host performs for model context and for peers that did not negotiate the feature.
Collection `_meta` and member `_meta` are kept apart: flattening yields the member objects
unchanged and drops the collection's own `label`, `range`, `displayKind` and `_meta`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

COLLECTION = "collection"
#: Attachment kinds a collection may contain (every 0.7.0 kind except `collection`).
MEMBER_KINDS = frozenset({"simple", "embeddedResource", "resource", "annotations", "chat"})


def is_collection(attachment: Any) -> bool:
    return isinstance(attachment, Mapping) and attachment.get("type") == COLLECTION


def collection_problems(attachment: Mapping[str, Any], where: str = "attachment") -> list[str]:
    """Why a collection attachment is invalid (empty list when it is valid)."""
    members = attachment.get("attachments")
    if not isinstance(members, list):
        return [f"{where}: a collection needs an `attachments` array"]
    if not members:
        return [f"{where}: a collection MUST contain at least one attachment"]
    problems = []
    for i, member in enumerate(members):
        if is_collection(member):
            problems.append(f"{where}.attachments[{i}]: collections cannot nest")
    return problems


def message_problems(message: Mapping[str, Any]) -> list[str]:
    """Problems of every collection in `message.attachments` (a message a host must reject)."""
    problems: list[str] = []
    for i, att in enumerate(message.get("attachments") or []):
        if is_collection(att):
            problems += collection_problems(att, f"attachments[{i}]")
    return problems


def _flat(attachments: Sequence[Any]) -> Iterator[Any]:
    for att in attachments:
        if is_collection(att):
            yield from att.get("attachments") or []
        else:
            yield att


def flatten_attachments(attachments: Sequence[Any]) -> list[Any]:
    """The model-facing list: each collection replaced by its members, in order (one level)."""
    return list(_flat(attachments))


def flatten_message(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """`message` as presented to a peer without collection support (same object if no collection)."""
    attachments = message.get("attachments")
    if not attachments or not any(is_collection(a) for a in attachments):
        return message
    return {**message, "attachments": flatten_attachments(attachments)}


def nesting_depth(attachment: Any) -> int:
    """How deeply collections nest inside `attachment` (0 for a non-collection, 1 for a valid one)."""
    if not is_collection(attachment):
        return 0
    members = attachment.get("attachments") or []
    return 1 + max((nesting_depth(m) for m in members), default=0)
