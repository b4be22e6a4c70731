"""Resource-watch channel additions the catalogue missed (REDUCERS.md §6.4)."""

from __future__ import annotations

from collections.abc import Iterator

from ._json import describe_diffs, same
from .base import Step, invariant


@invariant(
    "INV-X01",
    "Resource-watch state never mutates",
    severity="violation",
    source='specification/resource-watch-channel.md ("The state never mutates over the life of a '
    'watch … Change events flow through the action stream, not through state mutations"); '
    "fixture 200. Not in INVARIANTS.md.",
    kinds={"resourceWatch"},
    actions={"resourceWatch/changed"},
)
def watch_state_immutable(step: Step) -> Iterator[str]:
    """The resource-watch state is captured at `createResourceWatch` time and never mutates:
    `resourceWatch/changed` events leave it unchanged."""
    if not same(step.before, step.after):
        yield "resourceWatch/changed mutated the watch state: " + describe_diffs(
            step.before, step.after, left="before", right="after"
        )
