"""State-aware builders for the automation catalogue and automation-run channels (0.9.0):
catalogue entries by `resource`, a run's lifecycle, sessions and primary session."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from .. import channels as chs
from .. import uris
from .._common import Json, id_from, obj
from ._base import COLD, HOT, ActionContext, Builder, Offer, act, fresh_id, ids


def _entries(s: Json) -> list[str]:
    entries = s.get("entries")
    return ids(entries, "resource") if isinstance(entries, list) else []


def _set(s: Json, ctx: ActionContext) -> Offer:
    present = _entries(s)
    resource = st.one_of(fresh_id(present, chs.AUTOMATION_URIS, ctx), id_from(present, chs.AUTOMATION_URIS, stale=ctx.stale))
    return HOT, lambda: st.fixed_dictionaries(act("automation/set", automation=chs.automation_entries(resource)))


def _removed(s: Json, ctx: ActionContext) -> Offer:
    present = _entries(s)
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act("automation/removed", resource=id_from(present, chs.AUTOMATION_URIS, stale=ctx.stale))
    )


def _create(s: Json, ctx: ActionContext) -> Offer:
    present = _entries(s)
    return HOT * 0.3, lambda: st.fixed_dictionaries(
        act("automation/createRequested", resource=fresh_id(present, chs.AUTOMATION_URIS, ctx), definition=chs.definitions())
    )


def _update(s: Json, ctx: ActionContext) -> Offer:
    present = _entries(s)
    return (HOT * 0.3 if present else COLD), lambda: st.fixed_dictionaries(
        act(
            "automation/updateRequested",
            resource=id_from(present, chs.AUTOMATION_URIS, stale=ctx.stale),
            changes=chs.definition_patches(),
        )
    )


AUTOMATION_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "automation/set": _set,
        "automation/removed": _removed,
        "automation/createRequested": _create,
        "automation/updateRequested": _update,
    }
)


def _sessions(s: Json) -> list[str]:
    sessions = s.get("sessions")
    return [x for x in sessions if isinstance(x, str)] if isinstance(sessions, list) else []


def _lifecycle(s: Json, ctx: ActionContext) -> Offer:
    return HOT, lambda: st.fixed_dictionaries(act("automationRun/lifecycleChanged", lifecycle=chs.run_lifecycles()))


def _session_set(s: Json, ctx: ActionContext) -> Offer:
    present = _sessions(s)
    return HOT, lambda: st.fixed_dictionaries(
        act("automationRun/sessionSet", session=fresh_id(present, uris.SESSION_URIS, ctx))
    )


def _session_removed(s: Json, ctx: ActionContext) -> Offer:
    present = _sessions(s)
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act("automationRun/sessionRemoved", session=id_from(present, uris.SESSION_URIS, stale=ctx.stale))
    )


def _primary(s: Json, ctx: ActionContext) -> Offer:
    present = [x for x in _sessions(s) if x != s.get("primarySession")]
    weight = HOT * 0.6 if present or "primarySession" in s else COLD
    return weight, lambda: obj(
        act("automationRun/primarySessionChanged"),
        {"primarySession": id_from(present, uris.SESSION_URIS, stale=ctx.stale)},
    )


_CANCEL: Final = st.just({"type": "automationRun/cancelRequested"})

AUTOMATION_RUN_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "automationRun/lifecycleChanged": _lifecycle,
        "automationRun/sessionSet": _session_set,
        "automationRun/sessionRemoved": _session_removed,
        "automationRun/primarySessionChanged": _primary,
        "automationRun/cancelRequested": lambda s, ctx: (COLD, lambda: _CANCEL),  # a request: no-op
    }
)
