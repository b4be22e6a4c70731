"""The invariant catalogue: each check has an id (INV-nnn), severity, scope and spec source.

Public surface:

* `Step`, `Violation`, `Invariant`, `Reducer`, `Severity`, `Scope` — the vocabulary (`base`);
* `REGISTRY` (id -> Invariant), `for_kind(kind)` and `check_step(step, reducer=…)` (`registry`);
* `invariant` — the decorator a catalogue module uses to define a check.

Ids follow INVARIANTS.md (INV-001…053). A variant of a catalogue entry carries a suffix
(`INV-012.strong`, `INV-031.reducer`); checks the spec supports but the catalogue missed are
INV-X01…; INV-D01 is the differential check against the reference model.
"""

from .base import Invariant, Reducer, Scope, Severity, Step, Violation, invariant
from .registry import REGISTRY, InvariantCheckError, check_step, for_kind

__all__ = [
    "REGISTRY",
    "Invariant",
    "InvariantCheckError",
    "Reducer",
    "Scope",
    "Severity",
    "Step",
    "Violation",
    "check_step",
    "for_kind",
    "invariant",
]
