"""Required keys of the state objects the harness rewrites (REDUCERS.md §2.1, bold fields).

The trace shrinker may delete an optional key of a state to make a finding smaller, never a
required one: a finding must stay a state that a typed decoder (Go, Rust, Kotlin, Swift
clients) can load. Objects not listed here are left whole by the shrinker.
"""

from __future__ import annotations

from typing import Final

#: state kind -> required top-level keys
STATE_REQUIRED: Final[dict[str, frozenset[str]]] = {
    "root": frozenset({"agents"}),
    "session": frozenset({"provider", "title", "status", "lifecycle", "activeClients", "chats"}),
    "chat": frozenset({"resource", "title", "status", "modifiedAt", "turns"}),
    "terminal": frozenset({"title", "content", "claim"}),
    "changeset": frozenset({"status", "files"}),
    "annotations": frozenset({"annotations"}),
    "resourceWatch": frozenset({"root", "recursive"}),
}

ACTIVE_TURN_REQUIRED: Final = frozenset({"id", "startedAt", "message", "responseParts"})
TURN_REQUIRED: Final = frozenset({"id", "message", "responseParts", "state"})
