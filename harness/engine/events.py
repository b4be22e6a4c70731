"""The engine's event stream. The engine emits; consumers (console, corpus writer, report
writers) subscribe. The engine never imports a consumer.

Events may come from two threads (the campaign and its heartbeat): the bus delivers one event
at a time to all consumers, so a consumer never sees two events interleaved."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.corpus.finding import Finding


@dataclass(frozen=True)
class RunStarted:
    target: str
    profile: str
    seed: int
    budget_s: float | None
    kinds: tuple[str, ...]
    #: A live run: the protocol version the host negotiated before the run (None: not known).
    speaking: str | None = None


@dataclass(frozen=True)
class Progress:
    elapsed_s: float
    examples: int
    steps: int
    findings: int
    known: int
    chunk: int


@dataclass(frozen=True)
class Notice:
    """Something the person running the campaign should know (a kind not fuzzed, a policy that
    took effect). Not a finding. A `headline` notice says what the whole run is (a live host
    fuzzed on a version subset): printed at the top of stdout too, and kept as report.json
    `headline` and in the HTML report's verdict box."""

    message: str
    headline: bool = False


@dataclass(frozen=True)
class Shrinking:
    """A failure was caught; the trace shrinker starts minimising it."""

    invariant: str
    kind: str
    steps: int


@dataclass(frozen=True)
class FindingFound:
    finding: Finding
    reproduced: bool  # the saved trace was replayed once and failed the same way


@dataclass(frozen=True)
class CauseSeen:
    """A reported root cause was witnessed again (another invariant, action type or kind): the
    finding is not raised twice, its `cause` object grows. `cause` is the finding's updated
    `cause` (harness/causes/); counts alone are brought up to date by `RunFinished`."""

    signature: str  # the finding's signature (its cause id)
    cause: dict[str, Any]


@dataclass(frozen=True)
class KnownSeen:
    """A `known` invariant fired (an upstream spec violation the reference model reproduces)."""

    invariant: str
    kind: str
    message: str
    known_issue: str | None
    first: bool  # first time in this run for (invariant, kind)


@dataclass(frozen=True)
class RunFinished:
    elapsed_s: float
    examples: int
    steps: int
    findings: list[Finding]
    known_counts: dict[str, int]
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)  # action type -> {"sent", "changed"}
    stopped_because: str = "budget"
    extra: dict[str, Any] = field(default_factory=dict)
    #: "finished" (budget, chunks or max findings), "interrupted" (a signal) or "error" (the
    #: harness itself failed; `error` holds the message).
    status: str = "finished"
    error: str | None = None


Event = RunStarted | Progress | Notice | Shrinking | FindingFound | CauseSeen | KnownSeen | RunFinished
Sink = Callable[[Event], None]


class EventBus:
    """Fan an event out to every subscribed consumer, in subscription order."""

    def __init__(self, *sinks: Sink):
        self._sinks = list(sinks)
        self._lock = threading.RLock()

    def subscribe(self, sink: Sink) -> None:
        with self._lock:
            self._sinks.append(sink)

    def emit(self, event: Event) -> None:
        with self._lock:
            for sink in self._sinks:
                sink(event)
