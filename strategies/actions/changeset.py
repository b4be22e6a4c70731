"""State-aware builders for the changeset channel (files, review flags, operations, status)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from .. import messages as msg
from .. import states as sts
from .._common import FILE_IDS, OPERATION_IDS, Json, id_from, obj
from ._base import COLD, HOT, ActionContext, Builder, Offer, act, ids
from .session import optional, simple
from .terminal import cleared


def _files_review(s: Json, ctx: ActionContext) -> Offer:
    present = ids(s.get("files") or [], "id")
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act(
            "changeset/filesReviewChanged",
            files=st.lists(id_from(present, FILE_IDS, stale=ctx.stale), min_size=1, max_size=3),
            reviewed=st.booleans(),
        )
    )


def _file_removed(s: Json, ctx: ActionContext) -> Offer:
    present = ids(s.get("files") or [], "id")
    return (HOT if present else COLD), lambda: st.fixed_dictionaries(
        act("changeset/fileRemoved", fileId=id_from(present, FILE_IDS, stale=ctx.stale))
    )


def _op_status(s: Json, ctx: ActionContext) -> Offer:
    present = ids(s.get("operations") or [], "id")
    return (HOT if present else COLD), lambda: obj(
        act(
            "changeset/operationStatusChanged",
            operationId=id_from(present, OPERATION_IDS, stale=ctx.stale),
            status=st.sampled_from(("idle", "running", "error", "disabled")),
        ),
        {"error": msg.error_infos()},
    )


def _fixed(weight: float, strat: st.SearchStrategy[Json]) -> Builder:
    return lambda s, ctx: (weight, lambda: strat)


_OPERATIONS: Final = st.lists(sts.changeset_operations(), max_size=2, unique_by=lambda o: o["id"])

CHANGESET_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "changeset/statusChanged": _fixed(
            HOT * 0.6,
            obj(
                act("changeset/statusChanged", status=st.sampled_from(("computing", "ready", "error"))),
                {"error": msg.error_infos()},
            ),
        ),
        "changeset/fileSet": simple("changeset/fileSet", HOT, file=sts.changeset_files()),
        "changeset/fileRemoved": _file_removed,
        "changeset/filesReviewChanged": _files_review,
        "changeset/contentChanged": _fixed(
            HOT * 0.5,
            obj(
                act(
                    "changeset/contentChanged",
                    files=st.lists(sts.changeset_files(), max_size=2, unique_by=lambda f: f["id"]),
                ),
                {"operations": _OPERATIONS, "error": msg.error_infos()},
            ),
        ),
        "changeset/operationsChanged": optional("changeset/operationsChanged", operations=_OPERATIONS),
        "changeset/operationStatusChanged": _op_status,
        "changeset/cleared": cleared("changeset/cleared", "files"),
    }
)
