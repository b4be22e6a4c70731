"""State-aware builders for the annotations and resource-watch channels."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from hypothesis import strategies as st

from .. import attachments, uris
from .. import states as sts
from .._common import ANNOTATION_IDS, ENTRY_IDS, TURN_IDS, Json, id_from, obj, pool
from ._base import COLD, HOT, ActionContext, Builder, Offer, act, ids
from .session import simple


def _annotations(s: Json) -> list[Json]:
    anns = s.get("annotations")
    return [a for a in anns if isinstance(a, dict)] if isinstance(anns, list) else []


def _ann_ref(type_: str, **extra: st.SearchStrategy[Any]) -> Builder:
    optional: dict[str, st.SearchStrategy[Any]] = {}
    if type_ == "annotations/updated":
        optional = {
            "turnId": pool(TURN_IDS),
            "resource": uris.resource_uris(),
            "range": attachments.text_ranges(),
            "resolved": st.booleans(),
        }

    def build(s: Json, ctx: ActionContext) -> Offer:
        present = ids(_annotations(s), "id")
        return (HOT if present else COLD), lambda: obj(
            act(type_, annotationId=id_from(present, ANNOTATION_IDS, stale=ctx.stale), **extra),
            optional,
        )

    return build


def _entry_removed(s: Json, ctx: ActionContext) -> Offer:
    anns = [a for a in _annotations(s) if isinstance(a.get("id"), str)]

    def one(a: Json) -> st.SearchStrategy[Json]:
        entries = ids(a.get("entries") or [], "id")
        return st.fixed_dictionaries(
            act(
                "annotations/entryRemoved",
                annotationId=st.just(a["id"]),
                entryId=id_from(entries, ENTRY_IDS, stale=ctx.stale),
            )
        )

    if not anns:
        return COLD, lambda: st.fixed_dictionaries(
            act("annotations/entryRemoved", annotationId=pool(ANNOTATION_IDS), entryId=pool(ENTRY_IDS))
        )
    return HOT, lambda: st.sampled_from(anns).flatmap(one)


ANNOTATIONS_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "annotations/set": simple("annotations/set", HOT, annotation=sts.annotations()),
        "annotations/updated": _ann_ref("annotations/updated"),
        "annotations/removed": _ann_ref("annotations/removed"),
        "annotations/entrySet": _ann_ref("annotations/entrySet", entry=sts.annotation_entries()),
        "annotations/entryRemoved": _entry_removed,
    }
)

RESOURCE_WATCH_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        # events are consumed from the stream, never stored (a no-op by design)
        "resourceWatch/changed": simple(
            "resourceWatch/changed",
            COLD,
            changes=st.fixed_dictionaries(
                {
                    "items": st.lists(
                        st.fixed_dictionaries(
                            {
                                "uri": uris.resource_uris(),
                                "type": st.sampled_from(("added", "updated", "deleted")),
                            }
                        ),
                        min_size=1,
                        max_size=3,
                    )
                }
            ),
        ),
    }
)
