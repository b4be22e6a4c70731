"""A. Clock reads (INVARIANTS.md INV-002; REDUCERS.md §2.3 item 2, §11 item 1).

The 0.6.0/0.7.0 chat reducer reads the wall clock (`Date.now()`) for `modifiedAt` on the
non-no-op paths of eight actions; nothing else reads a clock. The reference model reproduces
that read with its injected clock (`Ctx.now_iso`), so `now` is an argument instead of a hidden
input. These probes *observe* the reads a target makes during one step:

* an in-process reducer (the reference model, a `ReferenceTarget`, any Python function) is
  watched here: `time.time`/`time.time_ns`, `datetime.now/utcnow/today`, `date.today` and the
  model's injected clock are replaced by counting wrappers for the duration of the call;
* a target in another process reports its own reads: `observe_clock(kind, state, action, now)`
  on the target returns `(state, reads)` — the adapter asks with `"observeClock": true` and the
  Node bridge counts `Date.now()` / `new Date()` during the call (docs/adapters.md).

A read where the reference model reads its clock too is upstream's documented impurity
(`known`, §11 item 1: replaying the same actions later yields another `modifiedAt`); a read
anywhere else is a `violation` of purity. A target that cannot be observed is not judged.
"""

from __future__ import annotations

import datetime as _dt
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from harness.reference import Model, Profile
from harness.reference.profile import Ctx

from ._json import fresh
from .base import ALL_KINDS, JSONDict, Reducer, Step, invariant
from .core import STAMPING

#: Packages whose module-level `datetime`/`date` names are swapped while watching.
_WATCHED_PACKAGES: Final = ("harness.reference",)

Observe = Callable[[str, JSONDict, JSONDict, int], "tuple[JSONDict, int | None] | None"]


@dataclass
class ClockReads:
    """What one watched call read: the wall clock, and the reference model's injected clock."""

    wall: int = 0
    injected: int = 0
    #: Only reads made on the watching thread count (a heartbeat or report thread reading the
    #: time meanwhile is not the reducer).
    thread: int = field(default_factory=threading.get_ident)

    @property
    def total(self) -> int:
        return self.wall + self.injected

    def describe(self) -> str:
        parts = []
        if self.wall:
            parts.append(f"{self.wall} wall-clock read(s)")
        if self.injected:
            parts.append(
                f"{self.injected} read(s) of the injected clock, the model's stand-in for "
                "upstream's Date.now()"
            )
        return ", ".join(parts) or "no clock read"


_REAL_DATETIME: Final = _dt.datetime
_REAL_DATE: Final = _dt.date
_REAL_NOW_ISO: Final = Ctx.__dict__["now_iso"]
_REAL_TIME: Final = time.time
_REAL_TIME_NS: Final = time.time_ns
#: The counters of the watches in progress (innermost last); empty when nothing is watched.
_WATCHES: list[ClockReads] = []


def _wall_read() -> None:
    if _WATCHES and _WATCHES[-1].thread == threading.get_ident():
        _WATCHES[-1].wall += 1


def _watched_time() -> float:
    _wall_read()
    return _REAL_TIME()


def _watched_time_ns() -> int:
    _wall_read()
    return _REAL_TIME_NS()


class _WatchedDateTime(_dt.datetime):
    @classmethod
    def now(cls, tz: Any = None) -> Any:
        _wall_read()
        return _REAL_DATETIME.now(tz)

    @classmethod
    def utcnow(cls) -> Any:
        _wall_read()
        return _REAL_DATETIME.now(_dt.UTC).replace(tzinfo=None)

    @classmethod
    def today(cls) -> Any:
        _wall_read()
        return _REAL_DATETIME.today()


class _WatchedDate(_dt.date):
    @classmethod
    def today(cls) -> Any:
        _wall_read()
        return _REAL_DATE.today()


def _watched_now_iso(ctx: Ctx) -> str:
    if _WATCHES and _WATCHES[-1].thread == threading.get_ident():
        _WATCHES[-1].injected += 1
    return _REAL_NOW_ISO.fget(ctx)  # type: ignore[no-any-return]


_NOW_ISO_WATCHED: Final = property(_watched_now_iso)
#: (number of loaded modules, the module attributes bound to datetime/date) — recomputed only
#: when modules were loaded since.
_BINDINGS: list[tuple[int, tuple[tuple[Any, str, Any, Any], ...]]] = []


def _bindings() -> tuple[tuple[Any, str, Any, Any], ...]:
    n = len(sys.modules)
    if _BINDINGS and _BINDINGS[0][0] == n:
        return _BINDINGS[0][1]
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "datetime" or name.startswith(_WATCHED_PACKAGES)):
            continue
        for attr, value in list(vars(module).items()):
            if value is _REAL_DATETIME:
                found.append((module, attr, value, _WatchedDateTime))
            elif value is _REAL_DATE:
                found.append((module, attr, value, _WatchedDate))
    _BINDINGS[:] = [(n, tuple(found))]
    return _BINDINGS[0][1]


@contextmanager
def watching() -> Iterator[ClockReads]:
    """Count the clock reads of in-process code run inside the block, on this thread (the
    engine steps one channel at a time per process; other threads' reads are not counted)."""
    reads = ClockReads()
    outer = bool(_WATCHES)
    _WATCHES.append(reads)
    swaps = () if outer else _bindings()
    if not outer:
        time.time, time.time_ns = _watched_time, _watched_time_ns  # type: ignore[assignment]
        Ctx.now_iso = _NOW_ISO_WATCHED  # type: ignore[assignment, method-assign]
        for module, attr, _real, watched in swaps:
            setattr(module, attr, watched)
    try:
        yield reads
    finally:
        _WATCHES.pop()
        if not outer:
            Ctx.now_iso = _REAL_NOW_ISO  # type: ignore[method-assign]
            time.time, time.time_ns = _REAL_TIME, _REAL_TIME_NS  # type: ignore[assignment]
            for module, attr, real, _watched in swaps:
                setattr(module, attr, real)


def _in_process(reducer: Any) -> bool:
    """A reducer whose calls run in this process: a plain function, the model, or a target
    that says so (`in_process = True`)."""
    owner = getattr(reducer, "__self__", None)
    return owner is None or isinstance(owner, Model) or bool(getattr(owner, "in_process", False))


def observe(
    reducer: Any, kind: str, state: JSONDict, action: JSONDict, now_ms: int
) -> tuple[JSONDict, ClockReads] | None:
    """Run one reduction and return its result with the clock reads it made (None: this
    reducer cannot be observed, e.g. an adapter that does not report its reads)."""
    owner = getattr(reducer, "__self__", None)
    remote = getattr(reducer, "observe_clock", None) or getattr(owner, "observe_clock", None)
    if remote is not None:
        answer = remote(kind, state, action, now_ms)
        if answer is None or answer[1] is None:
            return None
        return answer[0], ClockReads(wall=int(answer[1]))
    if not _in_process(reducer):
        return None
    with watching() as reads:
        result = reducer(kind, state, action, now_ms)
    return result, reads


@lru_cache(maxsize=16)
def _model(profile: Profile) -> Model:
    return Model(profile)


def reference_reads(step: Step) -> ClockReads:
    """The clock reads the pristine reference model makes on this step (none if it rejects it)."""
    with watching() as reads:
        try:
            _model(step.profile).reduce(step.kind, step.before, step.action, step.now_ms)
        except Exception:
            return ClockReads()
    return reads


def _observed(step: Step, reducer: Reducer) -> ClockReads | None:
    probe = getattr(reducer, "observe_clock", None)
    if probe is None:
        got = observe(reducer, step.kind, fresh(step.before), fresh(step.action), step.now_ms)
    else:
        got = probe(step.kind, fresh(step.before), fresh(step.action), step.now_ms)
    return got[1] if got is not None else None


@invariant(
    "INV-002.clock",
    "No clock read outside upstream's documented modifiedAt paths",
    severity="violation",
    source='guide/actions.md §Reducers ("pure — no side effects, no I/O"); R§2.3 items 1–2 '
    '("Nothing else reads a clock or random source")',
    kinds=ALL_KINDS,
    probe=True,
    note="Observed in-process (the reference model, Python reducers) and through adapters that "
    "report their reads (the Node bridge counts Date.now() and new Date()); other targets are "
    "not judged.",
)
def no_hidden_clock(step: Step, reducer: Reducer) -> Iterator[str]:
    """Reducers are pure: the only clock read is the chat reducer's `modifiedAt` stamp on the
    non-no-op paths of the eight clock-reading actions. A target that reads a clock on a step
    where the reference reducers read none has a hidden input."""
    reads = _observed(step, reducer)
    if reads is None or reads.total == 0 or reference_reads(step).total:
        return
    yield (
        f"{step.type or '<no type>'} on a {step.kind} state made {reads.describe()}; the "
        "reference reducers read no clock on this step"
    )


@invariant(
    "INV-002.wallclock",
    "The chat reducer reads the clock for modifiedAt (impure reducer)",
    severity="known",
    source='guide/actions.md ("pure … runs identically on server and client"); R§2.3 item 2; '
    "client 0.9.0 changelog (Fixed: modifiedAt derived from action data)",
    kinds={"chat"},
    probe=True,
    known_issue="REDUCERS.md §11 item 1 (the chat reducer reads the wall clock for modifiedAt)",
    actions=STAMPING,
    note="The reference model reads its injected clock exactly where upstream calls Date.now(), "
    "so a run against it reports this entry as known; an in-process or bridged target is "
    "observed directly.",
)
def reads_wall_clock(step: Step, reducer: Reducer) -> Iterator[str]:
    """Reducers are "pure — no side effects, no I/O" and "run identically on server and
    client"; the chat reducer nevertheless reads the clock for `modifiedAt`, so replaying the
    same actions on another machine or later yields a different state."""
    reads = _observed(step, reducer)
    if reads is None or reads.total == 0 or not reference_reads(step).total:
        return
    # The message does not depend on how the read was observed (the model's injected clock,
    # the bridge's Date.now count): the engine keeps a target's known violation known only
    # when the reference model reports the same message on the same step.
    yield (
        f"{step.type} read the clock for modifiedAt: replaying it at another time yields a "
        "different modifiedAt"
    )
