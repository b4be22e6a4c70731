"""What the harness runs against: reference (in-process), adapter, typescript, live.

`open_target(spec, profile=…)` parses a target spelling; see `base` for the interface the
engine uses and docs/adapters.md for the adapter protocol.
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
