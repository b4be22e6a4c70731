"""The host a live campaign fuzzes, and what happens when it dies (issue 16).

`HostKeeper` is the one place that knows how the host lives: a `host-cmd:` process (the
`LiveTarget` that started it), the embedded host served on the campaign's own loop, or a `ws://`
URL nobody here started. It answers `death(lost)` for `LiveRun` (why the host is gone, or None),
gives the URL to connect to, and starts a fresh host after a death (`ensure_alive`) when it can:
a process is started again (a new port: the command prints its URL again), an embedded host is
served again; a URL cannot be restarted, so a `ws://` host that went away ends the run.

A host that keeps dying (`MAX_DEATHS_IN_A_ROW` examples in a row end in its death) is dropped:
the campaign stops with one line saying so. A death pinned on a frame class (a bare JSON value
that crashes the host: the run sends that class no more) is not counted (issue 23).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from harness.targets.live import EmbeddedInLoop, LiveSpec, embedded_in_loop

from .loop import EventLoopThread

#: Deaths in a row, each within `QUICK_DEATH_STEPS` ops of a restart, before the campaign drops
#: the host (a host that dies after a good while of fuzzing is restarted however often it dies).
MAX_DEATHS_IN_A_ROW = 3
QUICK_DEATH_STEPS = 20


class HostGone(Exception):
    """The host died and cannot be restarted (a `ws://` host), or keeps dying."""


class HostKeeper:
    """Knows whether the host is alive, and brings a fresh one when it is not."""

    def __init__(self, url: str | None, *, target: Any = None, loop: EventLoopThread | None = None,
                 embedded: LiveSpec | None = None) -> None:
        self._url = url
        self.target = target  # a LiveTarget (host-cmd:, ws://) or None
        self.loop = loop
        self.embedded = embedded  # served on `loop` (host:embedded in the campaign)
        self._served: EmbeddedInLoop | None = None
        self._dead: str | None = None  # why the host died, once known
        self.restarts = 0
        self.deaths = 0
        self.in_a_row = 0
        self.steps_at_start = 0  # the campaign's step count when the host was (re)started

    # -- starting -----------------------------------------------------------------------------

    def start(self) -> str:
        if self.embedded is not None and self._served is None:
            assert self.loop is not None
            self._served = self.loop.run(embedded_in_loop(self.embedded), 20.0)
            self._url = self._served.url
        assert self._url is not None, "a live campaign needs a host URL"
        return self._url

    @property
    def url(self) -> str:
        return self.start()

    @property
    def can_restart(self) -> bool:
        if self.embedded is not None:
            return True
        return bool(self.target is not None and getattr(self.target, "can_restart", False))

    # -- death --------------------------------------------------------------------------------

    def death(self, lost: bool = False) -> str | None:
        """Why the host is gone (None while it is not known to be); `LiveRun`'s death hook."""
        if self._dead is not None:
            return self._dead
        why: str | None = None
        if self._served is not None:
            reason = self._served.dead()
            why = f"the embedded host died: {reason}" if reason else None
        elif self.target is not None and hasattr(self.target, "death"):
            why = self.target.death(lost)
        elif lost and self._url is not None:
            why = _gone(self._url)
        if why is not None:
            self._dead = why
            self.deaths += 1
        return why

    @property
    def dead(self) -> bool:
        return self._dead is not None or self.death(False) is not None

    def ensure_alive(self) -> str:
        """The URL of a living host: a dead one is restarted first (HostGone when it cannot be)."""
        if not self.dead:
            return self.url
        if not self.can_restart:
            raise HostGone(self._dead or "the host is gone")
        self.restart()
        return self.url

    def restart(self) -> None:
        if self._served is not None:
            old: Callable[[], Awaitable[None]] = self._served.aclose
            assert self.loop is not None
            with contextlib.suppress(Exception):  # a dead host's server may not close cleanly
                self.loop.run(old(), 10.0)
            self._served = None
            self.start()
        elif self.target is not None:
            self._url = self.target.restart()
        self._dead = None
        self.restarts += 1

    def after_chunk(self, steps: int, *, pinned: bool = False) -> None:
        """Count a death that came soon after a (re)start (a host that keeps dying). A death
        `pinned` on a frame class (the run sends that class no more) does not count."""
        if not self.dead or pinned:
            self.in_a_row = 0
        elif steps - self.steps_at_start < QUICK_DEATH_STEPS:
            self.in_a_row += 1
        else:
            self.in_a_row = 0  # it lived a while: a death worth restarting for

    def close(self) -> None:
        if self._served is not None and self.loop is not None:
            with contextlib.suppress(Exception):
                self.loop.run(self._served.aclose(), 10.0)
            self._served = None


def _gone(url: str) -> str | None:
    from harness.targets.base import TargetSetupError
    from harness.targets.live import reachable

    try:
        reachable(url, 2.0)
    except TargetSetupError as e:
        return f"the host went away: {e}"
    return None
