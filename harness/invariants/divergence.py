"""INV-D01: a differential step — the target's state against the reference model's.

Where the spec is silent the reference model (which reproduces the upstream reducers) is the
arbiter; any difference is a `divergence`, reported by the first differing JSON paths.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._json import describe_diffs, json_equal
from .base import ALL_KINDS, Step, invariant

#: How many differing paths a divergence message names.
MAX_PATHS = 3


@invariant(
    "INV-D01",
    "Agrees with the reference model",
    severity="divergence",
    source='DESIGN.md ("Reducer semantics follow upstream"); R§1 (equality after dropping '
    "absent keys)",
    kinds=ALL_KINDS,
    note="Runs only on differential steps (`reference_after` set). JSON types count (`true` is "
    "not `1`); numbers compare by value (`1` equals `1.0`).",
)
def agrees_with_reference(step: Step) -> Iterator[str]:
    """The state a target produces equals the one the reference model produces for the same
    (state, action, now), comparing after dropping absent (`None`-valued) keys on both sides."""
    ref = step.reference_after
    if ref is None or json_equal(step.after, ref):
        return
    text = describe_diffs(ref, step.after, left="reference", right="target", limit=MAX_PATHS)
    yield f"{step.type}: {text or 'states differ'}"
