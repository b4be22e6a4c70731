"""Which probe checks a step runs on a target whose probes are rationed (`probe_every` > 1).

A probe check calls the target's reducer again (a full-state round trip for an external
target), so against anything but the in-process model the run rations them. Rationing by
*step* — every `probe_every`-th step of a sequence runs every probe — starved the probes that
only apply to a rare action: INV-014 (`session/inputNeededSet`, REDUCERS.md §11 item 2) and
INV-030.chat-absent (`chat/workingDirectorySet` on an inherited subset, §11 item 5) ran only
when such a step happened to be the 25th of a sequence, i.e. almost never (a 90 s run against
the reference adapter: 33 `inputNeededSet` steps, no INV-014 probe; 3 × 150 s against the
TypeScript reducers: neither item reported).

Rationing by *check* instead: every probe check earns one run per `probe_every` steps of the
whole run (the first after `probe_every` steps; credit capped at one run, so a burst of its
action spends one), and spends it on the next step it applies to. A probe that applies to every step runs every `probe_every` steps, as
before; one that applies to a rare action runs on nearly every occurrence of it. Each check
still costs at most one round trip per `probe_every` steps. Deterministic: the credit depends on
the run's steps only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from harness.invariants.registry import REGISTRY


@functools.lru_cache(maxsize=2048)
def applicable_probes(kind: str, action_type: str | None) -> tuple[str, ...]:
    """Ids of the probe checks that may apply to a step of `action_type` on `kind`."""
    return tuple(
        i for i, inv in REGISTRY.items()
        if inv.probe and inv.check is not None and kind in inv.kinds
        and (inv.actions is None or action_type in inv.actions)
    )


@dataclass
class ProbeRations:
    """Run-wide credit per probe check (shared by every sequence of the run)."""

    every: int
    steps: int = 0
    _last: dict[str, int] = field(default_factory=dict)  # id -> step of its last run

    def due(self, kind: str, action_type: str | None) -> frozenset[str]:
        """Count one step; the applicable probe ids that have a run to spend (and spend it)."""
        self.steps += 1
        out = []
        for i in applicable_probes(kind, action_type):
            if self.steps - self._last.get(i, 0) >= self.every:
                self._last[i] = self.steps
                out.append(i)
        return frozenset(out)
