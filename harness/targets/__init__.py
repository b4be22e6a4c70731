"""What the harness runs against: reference (in-process), adapter, typescript, live.

`open_target(spec, profile=…)` parses a target spelling; see `base` for the interface the
engine uses and docs/adapters.md for the adapter protocol. Each concrete target module registers
its spellings with `base.register_target`; this package — the factory, above what it builds —
imports them (in the order the unknown-spelling error lists them), so `base` imports none.
"""

from .base import (
    ReduceSession,
    Target,
    TargetCrashed,
    TargetError,
    TargetProtocolError,
    TargetSession,
    TargetSetupError,
    TargetTimeout,
    open_target,
)

# The concrete targets fill the spelling registry as they are imported (order = the error's order).
# isort: off
from . import reference as reference
from . import adapter as adapter
from . import typescript as typescript
from . import live as live
# isort: on

__all__ = [
    "ReduceSession",
    "Target",
    "TargetCrashed",
    "TargetError",
    "TargetProtocolError",
    "TargetSession",
    "TargetSetupError",
    "TargetTimeout",
    "open_target",
]
