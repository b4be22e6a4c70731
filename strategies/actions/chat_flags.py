"""State-aware builders for what 0.9.0 and 1.0.0 added to the chat channel: resuming an errored
turn, the chat's own read / archived bits, its changeset catalogue, `movable`, canvas
references and background work."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from harness.reference.turns import resumable

from .. import channels as chs
from .. import states as sts
from .. import uris
from .._common import Json, id_from, iso_timestamps, meta, obj, pool
from ._base import COLD, HOT, ActionContext, Builder, Offer, act, flag, fresh_id, ids
from .session import optional

WORK_IDS: Final = ("shell-1", "shell-2", "subagent-1", "future-1")


def _turn_resume(s: Json, ctx: ActionContext) -> Offer:
    turns = s.get("turns") if isinstance(s.get("turns"), list) else []
    last = turns[-1] if turns else None
    ok = s.get("activeTurn") is None and resumable(last)
    present = [last["id"]] if isinstance(last, dict) and isinstance(last.get("id"), str) else []
    # The window is narrow (any turn action closes it), so an applicable resume weighs more.
    return (HOT * 4 if ok else COLD), lambda: st.fixed_dictionaries(
        act("chat/turnResume", turnId=id_from(present, ids(turns, "id") or ["turn-1"], stale=ctx.stale))
    )


def _bit(type_: str, key: str, bit: int) -> Builder:
    def build(s: Json, ctx: ActionContext) -> Offer:
        want = not flag(s.get("status"), bit)
        return HOT * 0.6, lambda: st.fixed_dictionaries(
            act(type_, **{key: st.sampled_from((want, want, want, not want))})
        )

    return build


def _movable(s: Json, ctx: ActionContext) -> Offer:
    want = s.get("movable") is not True
    return HOT * 0.5, lambda: st.fixed_dictionaries(act("chat/movableChanged", movable=st.sampled_from((want, want, not want))))


def work_items(work_id: st.SearchStrategy[str]) -> st.SearchStrategy[Json]:
    """`BackgroundWork`: a shell (with its terminal now and then) or a subagent."""
    common = {"id": work_id, "label": st.sampled_from(("Run tests", "Review changes", "")), "startedAt": iso_timestamps()}
    shell = obj(
        {**common, "kind": st.just("shell"), "command": st.sampled_from(("npm test", "make"))},
        {"terminal": st.sampled_from(uris.TERMINAL_URIS), "_meta": meta()},
    )
    subagent = obj({**common, "kind": st.just("subagent"), "chat": uris.chat_uris()}, {"_meta": meta()})
    return st.one_of(shell, subagent)


def _work(s: Json) -> list[str]:
    work = s.get("backgroundWork")
    return ids(work, "id") if isinstance(work, list) else []


def _work_set(s: Json, ctx: ActionContext) -> Offer:
    present = _work(s)
    work_id = st.one_of(fresh_id(present, WORK_IDS, ctx), pool(present or WORK_IDS))
    return HOT, lambda: st.fixed_dictionaries(act("chat/backgroundWorkSet", work=work_items(work_id)))


def _work_removed(s: Json, ctx: ActionContext) -> Offer:
    present = _work(s)
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act("chat/backgroundWorkRemoved", id=id_from(present, WORK_IDS, stale=ctx.stale))
    )


CHAT_LATER_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "chat/turnResume": _turn_resume,
        "chat/isReadChanged": _bit("chat/isReadChanged", "isRead", sts.IS_READ),
        "chat/isArchivedChanged": _bit("chat/isArchivedChanged", "isArchived", sts.IS_ARCHIVED),
        "chat/changesetsChanged": optional(
            "chat/changesetsChanged", changesets=st.lists(sts.changesets(), max_size=2)
        ),
        "chat/movableChanged": _movable,
        "chat/canvasesChanged": optional(
            "chat/canvasesChanged",
            canvases=st.lists(
                st.fixed_dictionaries({"resource": st.sampled_from(chs.CANVAS_URIS)}), max_size=2
            ),
        ),
        "chat/backgroundWorkSet": _work_set,
        "chat/backgroundWorkRemoved": _work_removed,
    }
)
