"""1.0.0 chat fields a host publishes on the chat channel itself: the read and archived bits of
the chat's own status, its changeset catalogue, `movable`, canvas references and the per-chat
change counts (CHANGELOG 1.0.0; fixtures 271–275, 286, 287).

`chat/isReadChanged` / `chat/isArchivedChanged` change only that chat's IsRead (32) /
IsArchived (64) bit — never its activity bits, never `modifiedAt`.
"""

from __future__ import annotations

from . import status
from .chat_status import with_status
from .keyed import field_handler
from .profile import Action, Ctx, Handler, State


def _flag(flag: int, source: str) -> Handler:
    def handler(state: State, action: Action, ctx: Ctx) -> State:
        return with_status(state, status.set_flag(state.get("status", 0), flag, bool(action[source])))

    handler.__name__ = f"chat_flag_{source}"
    return handler


HANDLERS: dict[str, Handler] = {
    "chat/isReadChanged": _flag(status.IS_READ, "isRead"),
    "chat/isArchivedChanged": _flag(status.IS_ARCHIVED, "isArchived"),
    "chat/changesetsChanged": field_handler("changesets", clear_if_absent=True),
    "chat/movableChanged": field_handler("movable"),
    "chat/canvasesChanged": field_handler("canvases", clear_if_absent=True),
}
