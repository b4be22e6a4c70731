"""Terminal channel additions the catalogue missed (REDUCERS.md §6.1)."""

from __future__ import annotations

from collections.abc import Iterator

from ._json import short
from .base import Step, invariant


@invariant(
    "INV-X02",
    "A terminal is always owned",
    severity="violation",
    source='specification/terminal-channel.md ("A terminal is always owned"); guide/terminals.md '
    '("terminal/claimed transfers ownership rather than releasing it"). Not in INVARIANTS.md.',
    kinds={"terminal"},
)
def always_owned(step: Step) -> Iterator[str]:
    """Every terminal always has an owner: no action removes `claim`; `terminal/claimed`
    transfers ownership rather than releasing it."""
    if step.type == "terminal/claimed" and step.action.get("claim") is None:
        return  # a claim-less (schema-invalid) payload: reducer behaviour is unspecified
    if step.before.get("claim") is not None and step.after.get("claim") is None:
        yield f"{step.type} removed the terminal's claim {short(step.before.get('claim'))}"
