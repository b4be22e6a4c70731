"""J. What 1.0.0 publishes about each chat without a chat subscription: the status bitset and
change counts of the session's chat catalogue (`SessionChatSummary`, `ChatSummary`) and of the
chat itself (`ChatState.changes`). CHANGELOG 1.0.0; fixtures 286–288."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from harness.reference import status as bits

from ._json import as_list, short
from .base import Step, invariant

_UINT32: Final = 2**32


def _status_problem(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{short(value)} is not an integer bitset"
    if not 0 <= value < _UINT32:
        return f"{value} is outside 0…2^32−1"
    if value & bits.ACTIVITY_MASK not in bits.ACTIVITIES:
        return f"{value} has activity bits {value & bits.ACTIVITY_MASK}, none of Idle, Error, InProgress, InputNeeded"
    return None


@invariant(
    "INV-X08",
    "The chat catalogue's status is a SessionStatus bitset, mirrored per chat",
    severity="violation",
    source='CHANGELOG 1.0.0 ("SessionChatSummary.status … via SessionStatus.IsArchived"; '
    '"the status bitset replaces the unreleased isRead and archived catalog fields"); fixture 288',
    kinds={"session"},
)
def catalogue_status(step: Step) -> Iterator[str]:
    """Each catalogue entry's `status`, when present, is a SessionStatus bitset ("Includes the
    activity bits and the orthogonal IsRead and IsArchived flags"): an integer below 2^32 whose
    activity bits are one activity; and `session/chatUpdated` mirrors a status "into only the
    addressed chat catalog entry" — no other entry's status changes."""
    if step.profile.version < (1, 0, 0):
        return
    chats = [c for c in as_list(step.after.get("chats")) if isinstance(c, dict)]
    for c in chats:
        if "status" in c:
            bad = _status_problem(c["status"])
            if bad:
                yield f"{step.type}: chats[{c.get('resource')}].status {bad}"
    if step.type == "session/chatUpdated":
        target = step.action.get("chat")
        before = {c.get("resource"): c.get("status") for c in as_list(step.before.get("chats")) if isinstance(c, dict)}
        for c in chats:
            uri = c.get("resource")
            if uri != target and uri in before and before[uri] != c.get("status"):
                yield f"session/chatUpdated({target}) changed the status of sibling {uri}: {before[uri]} → {c.get('status')}"


def _counts_problem(changes: Any) -> str | None:
    if not isinstance(changes, dict):
        return f"{short(changes)} is not an object"
    for key in ("additions", "deletions", "files"):
        v = changes.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or v != int(v)):
            return f"{key} is {short(v)}, not a count"
    if changes.get("files") == 0 and any(changes.get(k) for k in ("additions", "deletions")):
        return f"no changed files but {changes.get('additions') or 0} additions / {changes.get('deletions') or 0} deletions"
    return None


@invariant(
    "INV-X09",
    "Change counts are counts of the changed files",
    severity="violation",
    source='state.schema.json ChangesSummary ("Total number of inserted lines across all changed '
    'files", "Number of files that have changes"); CHANGELOG 1.0.0',
    kinds={"chat", "session"},
)
def change_counts(step: Step) -> Iterator[str]:
    """`ChatState.changes` and each catalogue entry's `changes` hold non-negative whole counts,
    and the line totals are "across all changed files": with `files: 0` there are no additions
    or deletions."""
    if step.profile.version < (1, 0, 0):
        return
    if step.kind == "chat":
        found = [("changes", step.after.get("changes"))] if "changes" in step.after else []
    else:
        found = [(f"chats[{c.get('resource')}].changes", c["changes"])
                 for c in as_list(step.after.get("chats")) if isinstance(c, dict) and "changes" in c]
    for where, changes in found:
        bad = _counts_problem(changes)
        if bad:
            yield f"{step.type}: {where}: {bad}"
