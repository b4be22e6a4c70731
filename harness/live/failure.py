"""How a live run fails on its own (not an invariant): the host hung or dropped a connection."""

from __future__ import annotations

from harness.invariants.base import Violation

TARGET_TIMEOUT = "TARGET-TIMEOUT"
TARGET_CRASH = "TARGET-CRASH"


class LiveFailure(Exception):
    """The host hung or dropped a connection: a finding of its own (not an invariant)."""

    def __init__(self, invariant: str, message: str) -> None:
        super().__init__(message)
        self.violation = Violation(invariant, "violation", message)
