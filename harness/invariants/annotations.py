"""G. Annotations (INVARIANTS.md INV-049; REDUCERS.md §6.3, §11 item 9)."""

from __future__ import annotations

from collections.abc import Iterator

from ._json import as_list, hkey, short
from .base import Step, catalogue_entry, invariant

INV_049 = catalogue_entry(
    "INV-049",
    "Annotations are never empty",
    severity="violation",
    scope="live",
    kinds={"annotations"},
    source='Annotation doc ("Every annotation MUST contain at least one AnnotationEntry")',
    statement="Every annotation has at least one entry; removing the last entry collapses the "
    "annotation via annotations/removed instead.",
    note="Needs a live host (later issue): dispatch entryRemoved of the last entry and expect a "
    "rejection. The reducer-only form is INV-049.reducer (known).",
    elsewhere="the live machine (harness/invariants/live/checks.py)",
)


@invariant(
    "INV-049.reducer",
    "Annotations are never empty, across reducer steps",
    severity="known",
    source='Annotation doc ("removing the last remaining entry collapses the annotation via '
    'AnnotationsRemovedAction rather than leaving an empty annotation behind")',
    kinds={"annotations"},
    known_issue="REDUCERS.md §11 item 9 (entryRemoved leaves entries: []; set stores [])",
)
def never_empty(step: Step) -> Iterator[str]:
    """Every annotation MUST contain at least one AnnotationEntry: no step leaves an annotation
    with an empty `entries` list."""
    before = {
        hkey(a.get("id")): a for a in as_list(step.before.get("annotations")) if isinstance(a, dict)
    }
    for ann in as_list(step.after.get("annotations")):
        if not isinstance(ann, dict) or ann.get("entries"):
            continue
        old = before.get(hkey(ann.get("id")))
        if old is None or old.get("entries"):
            yield f"{step.type}: annotation {short(ann.get('id'))} has no entries"
