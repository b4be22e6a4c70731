"""The run's wall clock and stop flag, shared by the campaign, its machines, the shrinker and
the target.

The budget is a hard limit: the machine checks it before every step, the shrinker before every
replay, and a target that supports it (`AdapterTarget.run_limit`) never waits past it. A signal
handler (installed by the command line) calls `request_stop`, which raises `RunStopped` at once
unless the run is inside a `shielded()` block (writing a finding or a report), in which case the
stop is raised as soon as the block ends.

The clock is injectable (`clock=`, default `time.monotonic`): tests drive budgets and deadlines
with a fake clock instead of asserting how fast the machine is (tests/test_engine_control.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from harness.errors import RunStopped

__all__ = ["RunControl", "RunStopped"]


class RunControl:
    def __init__(self, budget_s: float | None = None, *, started: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        #: The run's clock (monotonic seconds); every reading of time below goes through it.
        self.clock = clock
        self.started = clock() if started is None else started
        #: `clock()` value past which nothing may run (None: no time limit).
        self.deadline: float | None = None if budget_s is None else self.started + budget_s
        #: Why the run must stop (`"budget"`, `"SIGINT"`, `"SIGTERM"`), once it must.
        self.reason: str | None = None
        self._shield = 0
        self._pending = False
        self._held = False

    def elapsed(self) -> float:
        return self.clock() - self.started

    def time_left(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self.clock())

    def expired(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    def should_stop(self) -> bool:
        if self.reason is None and self.expired():
            self.reason = "budget"
        return self.reason is not None

    def check(self) -> None:
        """Raise `RunStopped` when the budget is spent or a stop was requested."""
        if self.should_stop():
            assert self.reason is not None
            raise RunStopped(self.reason)

    def request_stop(self, reason: str) -> None:
        """Ask the run to stop (from a signal handler): raises now unless shielded."""
        if self.reason is None or self.reason == "budget":
            self.reason = reason
        if self._shield:
            self._pending = True
            return
        raise RunStopped(reason)

    def hold(self) -> None:
        """From now on a stop request is only recorded, never raised: the run is finishing
        (writing its last report) and must not be cut short."""
        self._shield += 1
        self._held = True

    @contextmanager
    def shielded(self) -> Iterator[None]:
        """A block a signal must not cut in half; a stop requested meanwhile is raised after it."""
        self._shield += 1
        try:
            yield
        finally:
            self._shield -= 1
        if not self._shield and self._pending and not self._held:
            self._pending = False
            assert self.reason is not None
            raise RunStopped(self.reason)
