"""The host's injected clock: milliseconds since the epoch, never the wall clock by default."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]

#: 2026-01-01T00:00:00.000Z, where the fake clock starts.
FAKE_EPOCH_MS = 1_767_225_600_000


class FakeClock:
    """Monotonic and deterministic: each reading is `step_ms` later than the one before.

    The host reads the clock once per applied action, so two runs that feed the host the same
    frames in the same order see the same timestamps (replays are exact).
    """

    def __init__(self, start_ms: int = FAKE_EPOCH_MS, step_ms: int = 1):
        self._now = start_ms
        self._step = step_ms

    def __call__(self) -> int:
        self._now += self._step
        return self._now


def wall_clock() -> int:
    """The real clock, for a host run by hand (`ahp-fuzz host --wall-clock`)."""
    return time.time_ns() // 1_000_000
